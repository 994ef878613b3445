package latencytest

import "github.com/tailguard/tailguard/internal/chunkscan"

// fastEvent applies a chunk the fast path could read; ok is false (and
// nothing changed) when data must go through event.
func (s *stream) fastEvent(data []byte) (token, ok bool) {
	var f chunkscan.Facts
	if !s.last.Match(data, &f) {
		if !chunkscan.Scan(data, &f) {
			return false, false
		}
		s.last.Keep(data, &f)
	}
	// Strings with escapes are decoded before anything changes.
	var model, finish, content, refusal []byte
	var modelS, finishS, contentS, refusalS string
	decode := func(sp chunkscan.Span, esc bool, b *[]byte, str *string) bool {
		if t, ok := chunkscan.Text(data, sp, esc); ok {
			*b = t
			return true
		}
		v, ok := chunkscan.Unquote(data, sp)
		*str = v
		return ok
	}
	if f.Used && !decode(f.Model, f.ModelEsc, &model, &modelS) ||
		f.HasFinish && !decode(f.Finish, f.FinishEsc, &finish, &finishS) ||
		f.HasContent && !decode(f.Content, f.ContentEsc, &content, &contentS) ||
		f.HasRefusal && !decode(f.Refusal, f.RefusalEsc, &refusal, &refusalS) {
		return false, false
	}
	var ids [chunkscan.MaxTools]string
	for k, tc := range f.Tools[:f.NTools] {
		if tc.HasID {
			var b []byte
			if !decode(tc.ID, tc.IDEsc, &b, &ids[k]) {
				return false, false
			}
			if b != nil {
				ids[k] = string(b)
			}
		}
	}
	rec := s.rec
	if f.Used {
		switch {
		case len(model) > 0 && string(model) != rec.Model:
			rec.Model = string(model)
		case model == nil && modelS != "":
			rec.Model = modelS
		}
	}
	if f.PromptTokens >= 0 {
		rec.PromptTokens, rec.UsageReported = int(f.PromptTokens), true
	}
	if f.Completion >= 0 {
		rec.CompletionTokens, rec.UsageReported = int(f.Completion), true
	}
	if f.Cached >= 0 {
		rec.CachedTokens, rec.CachedReported = int(f.Cached), true
	}
	if f.ReasoningTokens >= 0 {
		rec.ReasoningTokens = int(f.ReasoningTokens)
	}
	if f.Others {
		s.others = true
	}
	if f.HasFinish {
		if finish != nil {
			if string(finish) != rec.FinishReason {
				rec.FinishReason = string(finish)
			}
		} else {
			rec.FinishReason = finishS
		}
	}
	if len(content) > 0 || contentS != "" {
		token = true
		s.content.Write(content)
		s.content.WriteString(contentS)
		s.answerAt()
	}
	if f.Reasoning {
		token = true
	}
	if len(refusal) > 0 || refusalS != "" {
		token = true
		s.refusal.Write(refusal)
		s.refusal.WriteString(refusalS)
		s.answerAt()
	}
	for k, tc := range f.Tools[:f.NTools] {
		if s.toolDelta(tc.Index, ids[k], tc.Name, tc.Args) {
			token = true
		}
	}
	return token, true
}
