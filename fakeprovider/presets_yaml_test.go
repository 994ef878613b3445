package fakeprovider

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHandMadePresetsYAML: each hand-made preset written as YAML in
// presets/ parses to exactly the profile its Go function builds.
func TestHandMadePresetsYAML(t *testing.T) {
	for _, name := range []string{"gpt-oss-120b-chain", "deepseek-v3.2", "glm-5.3", "gemma-4-31b", "deepseek-v4-pro-a",
		"deepseek-v4-pro-b", "deepseek-v4-pro-c", "kimi-k2.6-a", "kimi-k2.6-b", "kimi-k2.6-c"} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, presets[name](), fitted(name)())
		})
	}
}
