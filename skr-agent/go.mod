module github.com/lifecycle-manager/skr-agent

go 1.26.0
