package prompt

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// jinja2 is rendered by github.com/nikolalohinski/gonja/v2 in a sandbox
// of this file's making, since gonja has none:
//
//   - The loader holds the one template: no file is ever read. include,
//     import, from, extends, block, macro and call are not parsed at all
//     (macros and recursive loops could recurse until the stack
//     overflows, which no recover survives); neither are recursive for
//     loops.
//   - range() returns a list of at most JinjaMaxRange items (gonja's own
//     feeds a goroutine that leaks when a loop stops early). lipsum, the
//     padding filters and methods (center, indent, wordwrap, ljust, rjust,
//     zfill, expandtabs), format, batch and slice are absent; replace and
//     join refuse results over MaxOutput.
//   - Every *, +, ~, % and // of the template is rewritten into a guarded
//     call: string repetition and concatenation cannot exceed MaxOutput,
//     list concatenation JinjaMaxRange items, and a zero divisor is an
//     error, not a panic.
//   - Brackets nested over 64 deep in a tag, or a node graph deeper than
//     jinjaMaxDepth, are refused before anything runs.
//   - for, set and do check a step budget and the JinjaTimeout deadline
//     each time they run, and the output refuses to grow past MaxOutput,
//     so `{% for i in range(100000000) %}` is refused, and nested loops
//     stop at the deadline.
//   - Undefined variables are errors (StrictUndefined), and a panic
//     inside gonja is turned into an error.

// JinjaTimeout is the longest a jinja2 template may run.
const JinjaTimeout = time.Second

// JinjaMaxRange is the most items range() returns.
const JinjaMaxRange = 10000

// jinjaMaxSteps bounds the statements (for, set, do) one render executes.
const jinjaMaxSteps = 1 << 20

var jinjaPath = regexp.MustCompile(`\{\{\s*(\$[^{}]*?)\s*\}\}`)

var (
	jinjaOnce sync.Once
	jinjaEnv  *exec.Environment
	jinjaCfg  *config.Config
)

const budgetKey = "__assay_budget"

// budget is one render's allowance. Its fields are unexported so a
// template that reads __assay_budget sees nothing it can change.
type budget struct {
	deadline time.Time
	steps    int
	reason   string
}

func (b *budget) spend() error {
	b.steps++
	if b.steps > jinjaMaxSteps {
		b.reason = "the template executes too many statements"
	} else if time.Now().After(b.deadline) {
		b.reason = fmt.Sprintf("the template ran longer than %s", JinjaTimeout)
	}
	if b.reason != "" {
		return errors.New(b.reason)
	}
	return nil
}

func budgetOf(r *exec.Renderer) *budget {
	v, _ := r.Environment.Context.Get(budgetKey)
	b, _ := v.(*budget)
	return b
}

// guarded wraps a control structure so each execution spends budget.
type guarded struct {
	exec.ControlStructure
}

func (g guarded) Execute(r *exec.Renderer, tag *nodes.ControlStructureBlock) error {
	if b := budgetOf(r); b != nil {
		if err := b.spend(); err != nil {
			return err
		}
	}
	return g.ControlStructure.Execute(r, tag)
}

func guardParser(name string, p parser.ControlStructureParser) parser.ControlStructureParser {
	return func(pp *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
		cs, err := p(pp, args)
		if err != nil {
			return nil, err
		}
		if name == "for" {
			if v := reflect.ValueOf(cs).Elem().FieldByName("Recursive"); v.IsValid() && v.Bool() {
				return nil, errors.New("recursive loops are not supported")
			}
		}
		ec, ok := cs.(exec.ControlStructure)
		if !ok {
			return nil, fmt.Errorf("%s is not supported", name)
		}
		return guarded{ec}, nil
	}
}

func setupJinja() {
	structures := map[string]parser.ControlStructureParser{}
	for _, name := range []string{"if", "for", "set", "with", "raw", "filter", "autoescape", "do", "break", "continue"} {
		p, ok := builtins.ControlStructures.Get(name)
		if !ok {
			continue
		}
		if name == "for" || name == "set" || name == "do" {
			p = guardParser(name, p)
		}
		structures[name] = p
	}
	filters := map[string]exec.FilterFunction{}
	for _, name := range []string{"abs", "attr", "capitalize", "default", "d", "dictsort", "e", "escape",
		"filesizeformat", "first", "float", "forceescape", "groupby", "int", "items", "last", "length", "count",
		"list", "lower", "map", "max", "min", "pprint", "rejectattr", "reject", "reverse", "round", "safe",
		"selectattr", "select", "sort", "string", "striptags", "sum", "title", "tojson", "trim", "truncate",
		"unique", "upper", "urlencode", "urlize", "wordcount", "xmlattr", "fromjson", "ipaddr"} {
		if f, ok := builtins.Filters.Get(name); ok {
			filters[name] = f
		}
	}
	if f, ok := builtins.Filters.Get("replace"); ok {
		filters["replace"] = func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
			if len(params.Args) >= 2 && replaceTooLarge(in.String(), params.Args[0].String(), params.Args[1].String()) {
				return exec.AsValue(errors.New("replace would exceed the output limit"))
			}
			return f(e, in, params)
		}
	}
	if f, ok := builtins.Filters.Get("join"); ok {
		filters["join"] = func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
			sep := ""
			if len(params.Args) > 0 {
				sep = params.Args[0].String()
			}
			if joinTooLarge(in, sep) {
				return exec.AsValue(errors.New("join would exceed the output limit"))
			}
			return f(e, in, params)
		}
	}
	str := map[string]exec.Method[string]{}
	for _, name := range []string{"capitalize", "capwords", "casefold", "count", "endswith", "find", "isalnum",
		"isalpha", "isascii", "isdecimal", "isdigit", "islower", "isnumeric", "isprintable", "isspace", "istitle",
		"isupper", "lower", "lstrip", "partition", "removeprefix", "removesuffix", "rfind", "rpartition",
		"rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "upper"} {
		if m, ok := builtins.Methods.Str.Get(name); ok {
			str[name] = m
		}
	}
	if m, ok := builtins.Methods.Str.Get("replace"); ok {
		str["replace"] = func(self string, sv *exec.Value, args *exec.VarArgs) (any, error) {
			if len(args.Args) >= 2 && replaceTooLarge(self, args.Args[0].String(), args.Args[1].String()) {
				return nil, errors.New("replace would exceed the output limit")
			}
			return m(self, sv, args)
		}
	}
	if m, ok := builtins.Methods.Str.Get("join"); ok {
		str["join"] = func(self string, sv *exec.Value, args *exec.VarArgs) (any, error) {
			if len(args.Args) >= 1 && joinTooLarge(args.Args[0], self) {
				return nil, errors.New("join would exceed the output limit")
			}
			return m(self, sv, args)
		}
	}
	methods := builtins.Methods
	methods.Str = exec.NewMethodSet(str)

	globals := map[string]any{}
	for _, name := range []string{"dict", "namespace", "joiner", "cycler"} {
		if v, ok := builtins.GlobalFunctions.Get(name); ok {
			globals[name] = v
		}
	}
	jinjaEnv = &exec.Environment{
		Context:           exec.NewContext(globals),
		Filters:           exec.NewFilterSet(filters),
		Tests:             builtins.Tests,
		ControlStructures: exec.NewControlStructureSet(structures),
		Methods:           methods,
	}
	cfg := config.New()
	cfg.StrictUndefined = true
	cfg.KeepTrailingNewline = true
	jinjaCfg = cfg
}

func replaceTooLarge(s, old, repl string) bool {
	if len(repl) <= len(old) {
		return false
	}
	n := strings.Count(s, old)
	return len(s)+n*(len(repl)-len(old)) > MaxOutput
}

func joinTooLarge(in *exec.Value, sep string) bool {
	if !in.IsIterable() {
		return false
	}
	total := 0
	in.Iterate(func(_, _ int, key, _ *exec.Value) bool {
		total += len(sep) + len(key.String())
		return total <= MaxOutput
	}, func() {})
	return total > MaxOutput
}

// renderJinja renders src in the sandbox.
func renderJinja(src string, ctx map[string]any, _ bool) (out string, err error) {
	jinjaOnce.Do(setupJinja)
	b := &budget{deadline: time.Now().Add(JinjaTimeout)}
	data := make(map[string]any, len(ctx)+8)
	for k, v := range ctx {
		data[k] = jinjaData(v, 0)
	}
	// {{$...}} becomes a generated variable, as in mustache.
	var perr error
	n := 0
	src = jinjaPath.ReplaceAllStringFunc(src, func(tag string) string {
		expr := jinjaPath.FindStringSubmatch(tag)[1]
		v, ok := lookupJSONPath(ctx, expr)
		if !ok {
			if perr == nil {
				perr = unresolved(expr)
			}
			return ""
		}
		name := "__assay_path_" + strconv.Itoa(n)
		n++
		data[name] = stringify(v)
		return "{{ " + name + " }}"
	})
	if perr != nil {
		return "", perr
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", templateErr(FormatJinja2, fmt.Errorf("the template failed: %v", r))
		}
	}()
	tmpl, err := compileJinja(src)
	if err != nil {
		return "", err
	}

	data[budgetKey] = b
	data["range"] = func(args *exec.VarArgs) *exec.Value { return jinjaRange(b, args) }
	data["__assay_op"] = func(args *exec.VarArgs) *exec.Value {
		v := guardedOp(args)
		if v.IsError() && b.reason == "" {
			// A refused operation is the template's fault: report it
			// plainly rather than through gonja's wrapping.
			b.reason = v.Error()
		}
		return v
	}
	w := &jinjaWriter{b: b}
	err = tmpl.Execute(w, exec.NewContext(data))
	if b.reason != "" {
		return "", templateErr(FormatJinja2, errors.New(b.reason))
	}
	if w.over {
		return "", tooLarge("")
	}
	if err != nil {
		if name, ok := undefinedName(err); ok {
			return "", unresolved(name)
		}
		return "", templateErr(FormatJinja2, cleanJinjaErr(err))
	}
	return w.sb.String(), nil
}

// Compiled templates are cached: parsing is most of a render's cost, and an
// application renders the same few prompts on every invocation. Only small
// sources are cached, in a map emptied when full, so the cache stays small
// whatever the templates. A compiled template is only read when executed
// (TestRenderConcurrent checks it under the race detector).
const (
	jinjaCacheEntries = 128
	jinjaCacheMaxSrc  = 4 << 10
)

var jinjaCache = struct {
	sync.Mutex
	m map[string]*exec.Template
}{m: map[string]*exec.Template{}}

// compileJinja parses src, refuses it when too deeply nested, and guards
// its operators.
func compileJinja(src string) (*exec.Template, error) {
	if len(src) <= jinjaCacheMaxSrc {
		jinjaCache.Lock()
		t, ok := jinjaCache.m[src]
		jinjaCache.Unlock()
		if ok {
			return t, nil
		}
	}
	if tagNesting(src) > jinjaMaxNesting {
		return nil, templateErr(FormatJinja2, errors.New("the template is nested too deeply"))
	}
	loader, err := loaders.NewMemoryLoader(map[string]string{"/prompt": src})
	if err != nil {
		return nil, templateErr(FormatJinja2, err)
	}
	tmpl, err := exec.NewTemplate("/prompt", jinjaCfg, loader, jinjaEnv)
	if err != nil {
		return nil, templateErr(FormatJinja2, cleanJinjaErr(err))
	}
	if !rewriteOps(reflect.ValueOf(tmpl.Root()), map[uintptr]bool{}, 0) {
		return nil, templateErr(FormatJinja2, errors.New("the template is nested too deeply"))
	}
	if len(src) <= jinjaCacheMaxSrc {
		jinjaCache.Lock()
		if len(jinjaCache.m) >= jinjaCacheEntries {
			jinjaCache.m = map[string]*exec.Template{}
		}
		jinjaCache.m[src] = tmpl
		jinjaCache.Unlock()
	}
	return tmpl, nil
}

// gonja's words for an undefined name, attribute or item.
var undefinedRe = regexp.MustCompile(`Unable to evaluate name "([^"]+)"|[Uu]nable to evaluate ([^:]+): (?:attribute|item) '.*' not found`)

func undefinedName(err error) (string, bool) {
	m := undefinedRe.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	if m[1] != "" {
		return m[1], true
	}
	return m[2], true
}

// cleanJinjaErr drops gonja's echo of the whole template source.
func cleanJinjaErr(err error) error {
	s := err.Error()
	if i := strings.Index(s, "failed to parse template '"); i >= 0 {
		if j := strings.LastIndex(s, "': "); j > i {
			s = "failed to parse template: " + s[j+3:]
		}
	}
	return errors.New(s)
}

// jinjaData converts JSON-decoded values for gonja: integral numbers
// become ints, so {{ n * 2 }} with n = 3 renders 6 as Jinja does with
// Python's json, not 6.0.
func jinjaData(v any, depth int) any {
	if depth > 64 {
		return v
	}
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) && x > -1e15 && x < 1e15 {
			return int(x)
		}
	case map[string]any:
		o := make(map[string]any, len(x))
		for k, e := range x {
			o[k] = jinjaData(e, depth+1)
		}
		return o
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = jinjaData(e, depth+1)
		}
		return l
	}
	return v
}

// jinjaWriter is the output: capped, and checking the deadline.
type jinjaWriter struct {
	sb     strings.Builder
	b      *budget
	writes int
	over   bool
}

func (w *jinjaWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes%256 == 0 && time.Now().After(w.b.deadline) {
		w.b.reason = fmt.Sprintf("the template ran longer than %s", JinjaTimeout)
		return 0, errors.New(w.b.reason)
	}
	if w.over || w.sb.Len()+len(p) > MaxOutput {
		w.over = true
		return 0, errors.New("output too large")
	}
	return w.sb.Write(p)
}

func jinjaRange(b *budget, params *exec.VarArgs) *exec.Value {
	var a [3]int
	if len(params.Args) < 1 || len(params.Args) > 3 {
		return exec.AsValue(errors.New("range expects [start, ]stop[, step] integers"))
	}
	for i, v := range params.Args {
		if !v.IsInteger() {
			return exec.AsValue(errors.New("range expects [start, ]stop[, step] integers"))
		}
		a[i] = v.Integer()
	}
	start, stop, step := 0, a[0], 1
	if len(params.Args) >= 2 {
		start, stop = a[0], a[1]
	}
	if len(params.Args) == 3 {
		step = a[2]
	}
	if step == 0 {
		return exec.AsValue(errors.New("range step cannot be 0"))
	}
	count := 0
	if step > 0 && stop > start {
		count = (stop-start-1)/step + 1
	} else if step < 0 && stop < start {
		count = (start-stop-1)/(-step) + 1
	}
	if count > JinjaMaxRange || count < 0 {
		b.reason = fmt.Sprintf("range() is limited to %d items", JinjaMaxRange)
		return exec.AsValue(errors.New(b.reason))
	}
	out := make([]any, count)
	for i := range out {
		out[i] = start + i*step
	}
	return exec.AsValue(out)
}

// jinjaMaxNesting bounds the brackets nested inside one tag, checked on the
// source before gonja parses it (its parser slows down sharply with depth).
const jinjaMaxNesting = 64

// tagNesting is the deepest nesting of (, [ and { inside the {{ }} and
// {% %} tags of src (quotes are not tracked: a bracket in a string counts,
// which only errs towards refusing).
func tagNesting(src string) int {
	best, depth, in := 0, 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if !in {
			if c == '{' && i+1 < len(src) && (src[i+1] == '{' || src[i+1] == '%') {
				in, depth = true, 0
				i++
			}
			continue
		}
		switch c {
		case '(', '[', '{':
			depth++
			if depth > best {
				best = depth
			}
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case '}', '%':
			if i+1 < len(src) && src[i+1] == '}' && depth == 0 {
				in = false
				i++
			} else if c == '}' && depth > 0 {
				depth--
			}
		}
	}
	return best
}

// jinjaMaxDepth bounds the depth of a template's node graph, as walked by
// rewriteOps (a few steps per syntax level): gonja's errors quote the
// source of every enclosing node, so a deep expression that fails costs
// its depth squared or worse; real templates stay far below.
const jinjaMaxDepth = 400

// rewriteOps replaces every *, +, ~, % and // binary expression of the
// parsed template with a call to __assay_op(op, left, right). It walks the
// node graph by reflection, so control-structure nodes of any kind are
// covered. It reports false when the graph is deeper than jinjaMaxDepth,
// and the template must then be refused (its deep parts are not guarded).
func rewriteOps(v reflect.Value, seen map[uintptr]bool, depth int) bool {
	if depth > jinjaMaxDepth {
		return false
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return true
		}
		seen[v.Pointer()] = true
		return rewriteOps(v.Elem(), seen, depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return true
		}
		if be, ok := v.Interface().(*nodes.BinaryExpression); ok && v.CanSet() {
			if !rewriteOps(reflect.ValueOf(be), seen, depth+1) {
				return false
			}
			if call := opCall(be); call != nil && reflect.TypeOf(call).AssignableTo(v.Type()) {
				v.Set(reflect.ValueOf(call))
			}
			return true
		}
		return rewriteOps(v.Elem(), seen, depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() && f.CanAddr() {
				// Control structures keep their expressions in unexported
				// fields (set's value, for's iterable): reach them too,
				// or `{% set s = "x" * 1000000000 %}` would escape.
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			if !rewriteOps(f, seen, depth+1) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if !rewriteOps(v.Index(i), seen, depth+1) {
				return false
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			e := iter.Value()
			if e.Kind() == reflect.Interface {
				if be, ok := e.Interface().(*nodes.BinaryExpression); ok {
					if !rewriteOps(reflect.ValueOf(be), seen, depth+1) {
						return false
					}
					if call := opCall(be); call != nil {
						v.SetMapIndex(iter.Key(), reflect.ValueOf(call))
					}
					continue
				}
			}
			if !rewriteOps(e, seen, depth+1) {
				return false
			}
		}
	}
	return true
}

func opCall(be *nodes.BinaryExpression) nodes.Expression {
	if be.Operator == nil || be.Operator.Token == nil {
		return nil
	}
	switch be.Operator.Token.Type {
	case tokens.Multiply, tokens.Addition, tokens.Tilde, tokens.Modulo, tokens.FloorDivision:
	default:
		return nil
	}
	loc := be.Operator.Token
	return &nodes.Call{
		Location: loc,
		Func:     &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: "__assay_op", Line: loc.Line, Col: loc.Col}},
		Args:     []nodes.Expression{&nodes.String{Location: loc, Val: loc.Val}, be.Left, be.Right},
		Kwargs:   map[string]nodes.Expression{},
	}
}

// guardedOp evaluates op with gonja's semantics, refusing results over
// MaxOutput and zero divisors.
func guardedOp(args *exec.VarArgs) *exec.Value {
	if len(args.Args) != 3 {
		return exec.AsValue(errors.New("bad operator call"))
	}
	op, l, r := args.Args[0].String(), args.Args[1], args.Args[2]
	if l.IsError() {
		return l
	}
	if r.IsError() {
		return r
	}
	switch op {
	case "*":
		if l.IsFloat() || r.IsFloat() {
			return exec.AsValue(l.Float() * r.Float())
		}
		if l.IsString() {
			n := r.Integer()
			if n <= 0 {
				return exec.AsValue("")
			}
			if len(l.String()) > 0 && n > MaxOutput/len(l.String()) {
				return exec.AsValue(errors.New("string repetition exceeds the output limit"))
			}
			return exec.AsValue(strings.Repeat(l.String(), n))
		}
		return exec.AsValue(l.Integer() * r.Integer())
	case "+":
		if l.IsList() {
			if !r.IsList() {
				return exec.AsValue(errors.New("unable to concatenate a list and a non-list"))
			}
			if l.Len()+r.Len() > JinjaMaxRange {
				return exec.AsValue(errors.New("list concatenation exceeds the size limit"))
			}
			out := make([]any, 0, l.Len()+r.Len())
			for _, v := range []*exec.Value{l, r} {
				v.Iterate(func(_, _ int, key, _ *exec.Value) bool {
					out = append(out, key.Interface())
					return true
				}, func() {})
			}
			return exec.AsValue(out)
		}
		if l.IsFloat() || r.IsFloat() {
			return exec.AsValue(l.Float() + r.Float())
		}
		if l.IsString() || r.IsString() {
			return concat(l.String(), r.String())
		}
		return exec.AsValue(l.Integer() + r.Integer())
	case "~":
		return concat(l.String(), r.String())
	case "%":
		if r.Integer() == 0 {
			return exec.AsValue(errors.New("integer modulo by zero"))
		}
		return exec.AsValue(l.Integer() % r.Integer())
	case "//":
		if r.Float() == 0 {
			return exec.AsValue(errors.New("integer division by zero"))
		}
		return exec.AsValue(int(l.Float() / r.Float()))
	}
	return exec.AsValue(fmt.Errorf("unknown operator %q", op))
}

func concat(a, b string) *exec.Value {
	if len(a)+len(b) > MaxOutput {
		return exec.AsValue(errors.New("string concatenation exceeds the output limit"))
	}
	return exec.AsValue(a + b)
}
