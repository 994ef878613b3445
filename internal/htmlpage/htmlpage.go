// Package htmlpage writes one self-contained HTML page: sections of
// text, warnings, tables and inline SVG charts, with its CSS and a little
// script inline, so the file opens anywhere and fetches nothing.
//
// The page is readable without JavaScript (the script only lets a reader
// sort a table by a column), fits a phone's width (tables scroll inside
// their section, charts scale to the width), and prints (no navigation,
// charts kept whole on a page). A Content-Security-Policy meta tag
// forbids every fetch (default-src 'none'), so a page that somehow held a
// link to another resource still would not load it.
//
// Text is escaped by html/template; charts are trusted SVG from
// internal/svgchart (its text is escaped there) and are checked to be one
// <svg> element with no script, no foreign object and no external
// reference before they are inlined.
package htmlpage

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"regexp"
)

// Page is one report page.
type Page struct {
	// Title heads the page and names it in the browser.
	Title string
	// Verdict is shown beside the title: "PASS", "FAIL", or "" for none.
	Verdict string
	// Lead is a line under the title (what was judged, when).
	Lead string
	// Sections follow in order; a table of contents links them.
	Sections []Section
}

// Section is one part of the page.
type Section struct {
	// ID is the section's anchor ("verdict"); Heading its title.
	ID, Heading string
	// Warnings are shown first, boxed.
	Warnings []string
	// Paragraphs are plain text.
	Paragraphs []string
	// Tables and Charts follow the paragraphs.
	Tables []Table
	Charts []Chart
	// List is a bulleted list after everything else.
	List []string
	// Pre is preformatted text (a disclosure), shown last.
	Pre string
}

// Table is a table with a header row.
type Table struct {
	Caption string
	Head    []string
	// Numeric marks the columns aligned right (and sorted as numbers).
	Numeric []bool
	Rows    []Row
}

// Row is a table row; Class colours it: "pass", "fail", "inconclusive"
// or "".
type Row struct {
	Cells []string
	Class string
}

// Chart is one inline SVG chart.
type Chart struct {
	Title string
	SVG   []byte
}

// Write writes the page to w. It fails when a chart is not a plain SVG
// element (see the package doc).
func Write(w io.Writer, p Page) error {
	v := view{Page: p}
	for _, s := range p.Sections {
		vs := viewSection{Section: s}
		for _, t := range s.Tables {
			vs.Tables = append(vs.Tables, viewTable{Table: t})
		}
		for _, c := range s.Charts {
			svg, err := checkSVG(c.SVG)
			if err != nil {
				return fmt.Errorf("htmlpage: chart %q: %w", c.Title, err)
			}
			vs.Charts = append(vs.Charts, viewChart{Title: c.Title, SVG: template.HTML(svg)})
		}
		v.Sections = append(v.Sections, vs)
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type view struct {
	Page
	Sections []viewSection
}

type viewSection struct {
	Section
	Tables []viewTable
	Charts []viewChart
}

type viewTable struct{ Table }

// Align is the CSS class of column i.
func (t viewTable) Align(i int) string {
	if i < len(t.Numeric) && t.Numeric[i] {
		return "num"
	}
	return ""
}

type viewChart struct {
	Title string
	SVG   template.HTML
}

var (
	// svgForbidden: what an inlined chart must not hold: script, event
	// handlers, foreign content, links and references to anything
	// outside the page.
	svgForbidden = regexp.MustCompile(`(?i)<\s*(script|foreignobject|iframe|object|embed|image|use|a)\b|\bon[a-z]+\s*=|\b(href|src)\s*=|url\s*\(|@import`)
	svgOpen      = regexp.MustCompile(`^\s*<svg[\s>]`)
)

// checkSVG returns svg when it is one <svg> element free of script and
// external references.
func checkSVG(svg []byte) ([]byte, error) {
	switch {
	case len(svg) == 0:
		return nil, errors.New("empty")
	case !svgOpen.Match(svg):
		return nil, errors.New("does not start with <svg>")
	case !bytes.HasSuffix(bytes.TrimSpace(svg), []byte("</svg>")):
		return nil, errors.New("does not end with </svg>")
	case bytes.Count(svg, []byte("<svg")) != 1:
		return nil, errors.New("holds more than one <svg> element")
	}
	if m := svgForbidden.Find(svg); m != nil {
		return nil, fmt.Errorf("holds %q (scripts and external references are not inlined)", m)
	}
	return svg, nil
}

var page = template.Must(template.New("page").Parse(pageHTML))

// pageHTML: the CSS keeps it readable on a phone (tables scroll in their
// box, charts scale) and in print; the script only sorts tables.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}{{if .Verdict}}: {{.Verdict}}{{end}}</title>
<style>
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:1100px;padding:12px;color:#222;line-height:1.4}
h1,h2,p,li,caption,figcaption{overflow-wrap:anywhere}
h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.2em;margin:1.4em 0 .5em;border-bottom:1px solid #ddd}
.verdict{display:inline-block;padding:.1em .5em;border-radius:4px;color:#fff;font-size:.9em;vertical-align:middle}
.verdict.PASS{background:#2a7a2a}.verdict.FAIL{background:#c0392b}
.lead{color:#555}nav ul{padding-left:1.2em;margin:.3em 0}nav li{display:inline;margin-right:1em}
.warn{border-left:4px solid #e0a800;background:#fff8e1;padding:.4em .7em;margin:.5em 0}
.scroll{overflow-x:auto;margin:.5em 0}
table{border-collapse:collapse;font-size:.9em}caption{text-align:left;font-weight:bold;padding:.3em 0}
th,td{border:1px solid #ddd;padding:.25em .5em;vertical-align:top}th{background:#f4f4f4;text-align:left}
th[data-sortable]{cursor:pointer}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fdecea}tr.pass td{background:#eef7ee}tr.inconclusive td{background:#fff8e1}
figure{margin:.8em 0}figcaption{font-size:.9em;color:#555}
svg{max-width:100%;height:auto}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:.6em;font-size:.85em}
@media print{nav{display:none}figure,table{break-inside:avoid}body{max-width:none}}
</style>
</head>
<body>
<header>
<h1>{{.Title}}{{if .Verdict}} <span class="verdict {{.Verdict}}">{{.Verdict}}</span>{{end}}</h1>
{{if .Lead}}<p class="lead">{{.Lead}}</p>{{end}}
{{if .Sections}}<nav><ul>{{range .Sections}}<li><a href="#{{.ID}}">{{.Heading}}</a></li>{{end}}</ul></nav>{{end}}
</header>
<main>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Heading}}</h2>
{{range .Warnings}}<p class="warn">{{.}}</p>
{{end}}{{range .Paragraphs}}<p>{{.}}</p>
{{end}}{{range .Tables}}{{$t := .}}<div class="scroll"><table>
{{if .Caption}}<caption>{{.Caption}}</caption>{{end}}<thead><tr>{{range $i, $h := .Head}}<th class="{{$t.Align $i}}" data-sortable>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr{{if .Class}} class="{{.Class}}"{{end}}>{{range $i, $c := .Cells}}<td class="{{$t.Align $i}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{end}}{{range .Charts}}<figure>{{.SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}{{if .List}}<ul>{{range .List}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Pre}}<pre>{{.Pre}}</pre>
{{end}}</section>
{{end}}</main>
<script>
document.querySelectorAll("th[data-sortable]").forEach(function(th){
  th.addEventListener("click",function(){
    var table=th.closest("table"),body=table.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
    var num=th.classList.contains("num"),asc=th.dataset.dir!=="asc";th.dataset.dir=asc?"asc":"desc";
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){
      var x=a.cells[i].textContent,y=b.cells[i].textContent;
      if(num){var p=parseFloat(x),q=parseFloat(y);if(isNaN(p))p=Infinity;if(isNaN(q))q=Infinity;return asc?p-q:q-p;}
      return asc?x.localeCompare(y):y.localeCompare(x);
    });
    rows.forEach(function(r){body.appendChild(r);});
  });
});
</script>
</body>
</html>
`
