module github.com/lifecycle-manager/certs

go 1.26.0

require (
	github.com/go-logr/logr v1.4.3
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
