package chunkscan

import "testing"

// Scan reads the common chunk's fields, and gives up on what only
// encoding/json may decide. (latencytest's tests compare Scan with
// encoding/json on every chunk they decode; this pins the basics here.)
func TestScan(t *testing.T) {
	const chunk = `{"id":"c1","model":"m\u00e9","choices":[{"index":0,"delta":{"content":"Hi \"you\""},"finish_reason":null}],"usage":{"prompt_tokens":9,"completion_tokens":3}}`
	var f Facts
	if !Scan([]byte(chunk), &f) {
		t.Fatal("Scan gave up on a plain chunk")
	}
	model, ok := Unquote([]byte(chunk), f.Model)
	content, okc := Unquote([]byte(chunk), f.Content)
	if !ok || !okc || model != "mé" || content != `Hi "you"` || !f.ModelEsc || !f.ContentEsc ||
		f.PromptTokens != 9 || f.Completion != 3 || f.Cached != -1 || !f.Choice0 || f.HasFinish {
		t.Errorf("facts %+v: model %q, content %q", f, model, content)
	}
	for _, bad := range []string{
		`{"Model":"m","choices":[]}`,            // a key encoding/json folds
		`{"model":"a","model":"b"}`,             // a duplicate key
		`{"choices":[{"delta":{"content":1}}]}`, // a field of the wrong type
		`{"usage":{"prompt_tokens":1.5}}`,       // a count that is not an integer
		`{"model":"m"} x`,                       // not one document
		`{"choices":[{"delta":{"content":"x","extra_content":{"google":{"thought":true}}}}]}`, // a vendor's flag: a thought, not content
	} {
		if Scan([]byte(bad), &f) {
			t.Errorf("Scan read %s, which must take the slow path", bad)
		}
	}
}

// Every reasoning field a vendor sends (thinking among them) is
// reasoning, and a null extra_content is nothing.
func TestScanReasoningFields(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning", "thinking"} {
		var f Facts
		chunk := `{"choices":[{"delta":{"` + field + `":"hm","extra_content":null}}]}`
		if !Scan([]byte(chunk), &f) || !f.Reasoning || f.HasContent {
			t.Errorf("%s: scanned %v, facts %+v: want reasoning and no content", chunk, Scan([]byte(chunk), &f), f)
		}
	}
}

// A template matches the same chunk with other text, and nothing else.
func TestTemplate(t *testing.T) {
	a := []byte(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}`)
	var f, g Facts
	if !Scan(a, &f) {
		t.Fatal("Scan gave up")
	}
	var tpl Template
	tpl.Keep(a, &f)
	if !tpl.Held() {
		t.Fatal("a chunk whose text is its last string was not kept")
	}
	b := []byte(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"there"}}]}`)
	if !tpl.Match(b, &g) {
		t.Fatal("the same chunk with other text did not match")
	}
	if got, _ := Text(b, g.Content, g.ContentEsc); string(got) != "there" {
		t.Errorf("matched text %q, want %q", got, "there")
	}
	if tpl.Match([]byte(`{"id":"c2","model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}`), &g) {
		t.Error("a chunk with another id matched")
	}
}
