package prompt

import (
	"regexp"
	"testing"
)

// curlyRE is the compatible platform's definition of a curly placeholder.
var curlyRE = regexp.MustCompile(`\{\{\s*(.*?)\s*\}\}`)

// FuzzCurlyScan: the scanner finds exactly the expression's matches.
func FuzzCurlyScan(f *testing.F) {
	for _, s := range []string{"a {{b}} c", "{{ b }}{{c}}", "{{{b}}}", "{{a\nb}} {{c}}", "{{\n a \n}}", "{{}}", "{{ }", "}}{{", "{{a}}}}", "{{ {{a}} }}", "{{\xff}}", "{{\r\n}}x{{\n}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want := curlyRE.FindAllStringSubmatchIndex(src, -1)
		var got [][]int
		names := []string{}
		for pos := 0; ; {
			start, end, name, ok := nextCurly(src, pos)
			if !ok {
				break
			}
			got = append(got, []int{start, end})
			names = append(names, name)
			pos = end
		}
		if len(got) != len(want) {
			t.Fatalf("%q: scanner found %v, expression %v", src, got, want)
		}
		for i, m := range want {
			if got[i][0] != m[0] || got[i][1] != m[1] || names[i] != src[m[2]:m[3]] {
				t.Fatalf("%q: match %d: scanner %v %q, expression %v %q", src, i, got[i], names[i], m, src[m[2]:m[3]])
			}
		}
	})
}
