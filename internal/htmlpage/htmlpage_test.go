package htmlpage

import (
	"bytes"
	"strings"
	"testing"
)

const okSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10"><text x="1" y="1">a &lt; b</text></svg>`

// Text is escaped wherever it lands: title, cells, paragraphs, lists.
func TestWriteEscapes(t *testing.T) {
	evil := `<script>alert(1)</script>`
	var buf bytes.Buffer
	err := Write(&buf, Page{Title: evil, Verdict: "FAIL", Lead: evil, Sections: []Section{{
		ID: "s", Heading: evil, Warnings: []string{evil}, Paragraphs: []string{evil}, List: []string{evil}, Pre: evil,
		Tables: []Table{{Caption: evil, Head: []string{evil}, Rows: []Row{{Cells: []string{evil}, Class: "fail"}}}},
		Charts: []Chart{{Title: evil, SVG: []byte(okSVG)}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<script>"); n != 1 { // the page's own sorting script
		t.Errorf("%d <script> tags, want only the page's own", n)
	}
	if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 10 {
		t.Errorf("the text was escaped %d times, want every place (10)", n)
	}
	if !strings.Contains(page, okSVG) {
		t.Error("the chart is not inlined as it is")
	}
}

// A chart that could run script or fetch something is refused, with the
// reason.
func TestWriteRefusesUnsafeSVG(t *testing.T) {
	for _, c := range []struct{ svg, want string }{
		{"", "empty"},
		{"<div></div>", "does not start with <svg>"},
		{`<svg><text>x</text>`, "does not end"},
		{`<svg><svg></svg></svg>`, "more than one"},
		{`<svg><script>alert(1)</script></svg>`, "<script"},
		{`<svg onload="alert(1)"></svg>`, "onload="},
		{`<svg><image href="http://127.0.0.1/x.png"/></svg>`, "<image"},
		{`<svg><rect fill="url(http://127.0.0.1/x)"/></svg>`, "url("},
		{`<svg><foreignObject></foreignObject></svg>`, "<foreignObject"},
		{`<svg><a xlink:href="#x"></a></svg>`, "<a"},
		{`<svg><style>@import "http://127.0.0.1/x.css";</style></svg>`, "@import"},
	} {
		var buf bytes.Buffer
		err := Write(&buf, Page{Title: "t", Sections: []Section{{ID: "s", Charts: []Chart{{Title: "c", SVG: []byte(c.svg)}}}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("svg %q: error %v, want one saying %q", c.svg, err, c.want)
		}
		if buf.Len() != 0 {
			t.Errorf("svg %q: a refused page wrote %d bytes", c.svg, buf.Len())
		}
	}
}

// Numeric columns align right; rows carry their verdict's class; a page
// without a verdict shows no badge.
func TestWriteTables(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, Page{Title: "t", Sections: []Section{{ID: "s", Heading: "h", Tables: []Table{{
		Head: []string{"name", "n"}, Numeric: []bool{false, true},
		Rows: []Row{{Cells: []string{"a", "12"}, Class: "inconclusive"}},
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`<th class="num" data-sortable>n</th>`, `<tr class="inconclusive"><td class="">a</td><td class="num">12</td></tr>`, `<a href="#s">h</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `class="verdict`) {
		t.Error("a page without a verdict shows a badge")
	}
}
