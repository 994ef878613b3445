package latencytest

// MixClassIndex is the index in m.Classes of request i's class (tests
// and benchmarks build the same prompts as a Batch).
func MixClassIndex(m Mix, i int) int {
	c := m.class(i)
	for k := range m.Classes {
		if m.Classes[k].Name == c.Name {
			return k
		}
	}
	return -1
}

// PromptText is the filler prompt of chars characters a Batch sends.
func PromptText(chars int) string { return promptText(chars) }
