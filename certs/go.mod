module github.com/lifecycle-manager/certs

go 1.26.0
