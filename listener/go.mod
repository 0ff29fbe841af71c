module github.com/lifecycle-manager/listener

go 1.26.0
