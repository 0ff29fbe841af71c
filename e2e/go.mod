module github.com/lifecycle-manager/e2e

go 1.26.0
