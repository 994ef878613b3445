module github.com/tailguard/tailguard

go 1.26.0

require (
	github.com/aws/aws-sdk-go-v2 v1.48.0
	github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream v1.7.27
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.74.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/aws/smithy-go v1.28.9 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pandatix/go-abnf v0.5.5 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
