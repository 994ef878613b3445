module github.com/tailguard/tailguard

go 1.25.0

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/jarcoal/httpmock v1.4.2 // indirect
	github.com/openai/openai-go/v3 v3.74.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tidwall/gjson v1.19.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)
