module github.com/lifecycle-manager/kcp-operator

go 1.26.0
