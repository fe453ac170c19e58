package codebox

import (
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// regexpTimeout bounds one regexp2 match (see the init in js.go). A timed
// out match counts as no match, as goja treats regexp2's errors.
const regexpTimeout = time.Second

func setRegexpTimeout() { regexp2.DefaultMatchTimeout = regexpTimeout }

// installGuards wraps the builtins whose one native call can build a
// value of a size the code chooses (String repeat, padStart, padEnd,
// concat, replace, replaceAll, split; every Array.prototype method, with
// join and flat sized; Array.from; JSON.stringify) so that a string over
// maxChars or an array over maxElems is a RangeError before it is built.
// A Go call cannot be interrupted, so without these `'x'.repeat(1e10)`
// would allocate 10 GB before the heap watch could act.
func installGuards(vm *goja.Runtime, lim Limits) error {
	maxChars := lim.MemBytes / 2 // a UTF-16 string takes 2 bytes a character
	// A text built piece by piece (join, JSON.stringify) is checked as it
	// grows, so its guard must stop it before the heap watch would: while
	// the builder grows, its new buffer (up to 2 bytes a character, twice
	// the length) and the one it copies from are live, up to 6 bytes a
	// character. With maxChars (8 MB of text for a 16 MiB limit), a 1 GB
	// stringify was refused by the heap watch or by its guard depending on
	// timing.
	maxBuilt := lim.MemBytes / 8
	maxElems := lim.MemBytes / 16 // a goja value is a 16-byte interface
	rangeCtor, ok := goja.AssertConstructor(vm.Get("RangeError"))
	if !ok {
		return fmt.Errorf("no RangeError constructor")
	}
	throw := func(format string, a ...any) {
		o, err := rangeCtor(nil, vm.ToValue(fmt.Sprintf(format, a...)))
		if err != nil {
			panic(err)
		}
		panic(o)
	}
	tooLong := func(what string, n int64) {
		throw("%s of %d characters is over the sandbox's memory limit (%d MiB)", what, n, lim.MemBytes>>20)
	}
	tooMany := func(what string, n int64) {
		throw("%s of %d elements is over the sandbox's memory limit (%d MiB)", what, n, lim.MemBytes>>20)
	}
	strLen := func(v goja.Value) int64 {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return 0
		}
		if s, ok := v.(goja.String); ok {
			return int64(s.Length())
		}
		if _, ok := v.(*goja.Object); ok {
			return 0 // converted by the builtin itself, through guarded code
		}
		return int64(len(v.String()))
	}
	thisLen := func(this goja.Value) int64 {
		if goja.IsUndefined(this) || goja.IsNull(this) {
			return 0
		}
		l := this.ToObject(vm).Get("length")
		if l == nil {
			return 0
		}
		return l.ToInteger()
	}
	wrap := func(obj *goja.Object, name string, check func(goja.FunctionCall)) error {
		orig, ok := goja.AssertFunction(obj.Get(name))
		if !ok {
			return nil
		}
		return obj.DefineDataProperty(name, vm.ToValue(func(call goja.FunctionCall) goja.Value {
			check(call)
			v, err := orig(call.This, call.Arguments...)
			if err != nil {
				panic(err)
			}
			return v
		}), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	object := func(name string) *goja.Object { return vm.Get(name).ToObject(vm) }
	proto := func(name string) *goja.Object { return object(name).Get("prototype").ToObject(vm) }

	// Strings.
	sp := proto("String")
	guards := map[string]func(goja.FunctionCall){
		"repeat": func(c goja.FunctionCall) {
			n := c.Argument(0).ToFloat()
			if l := float64(strLen(c.This)) * n; l > float64(maxChars) {
				tooLong("a repeated string", int64(l))
			}
		},
		"padStart": func(c goja.FunctionCall) {
			if n := c.Argument(0).ToFloat(); n > float64(maxChars) {
				tooLong("a padded string", int64(n))
			}
		},
		"concat": func(c goja.FunctionCall) {
			n := strLen(c.This)
			for _, a := range c.Arguments {
				n += strLen(a)
			}
			if n > maxChars {
				tooLong("a concatenated string", n)
			}
		},
		"split": func(c goja.FunctionCall) {
			// at most one element per character plus one
			if n := strLen(c.This) + 1; n > maxElems {
				sep := c.Argument(0)
				if s, ok := sep.Export().(string); ok && s != "" {
					n = int64(strings.Count(c.This.String(), s)) + 1
				}
				if n > maxElems {
					tooMany("a split", n)
				}
			}
		},
	}
	guards["padEnd"] = guards["padStart"]
	replace := func(c goja.FunctionCall) {
		r := c.Argument(1)
		if _, isFunc := goja.AssertFunction(r); isFunc {
			return // each replacement comes from JavaScript, one at a time
		}
		s, rl := strLen(c.This), strLen(r)
		if rl <= 2 {
			return
		}
		matches := s + 1 // the most a pattern can match
		if p, ok := c.Argument(0).Export().(string); ok {
			matches = int64(strings.Count(c.This.String(), p))
		}
		if n := s + matches*rl; n > maxChars {
			tooLong("a replaced string", n)
		}
	}
	guards["replace"], guards["replaceAll"] = replace, replace
	for name, check := range guards {
		if err := wrap(sp, name, check); err != nil {
			return err
		}
	}

	// Arrays: no method runs over an array longer than maxElems, and the
	// two that build more than their input (join, flat) are sized.
	ap := proto("Array")
	lengthCheck := func(c goja.FunctionCall) {
		if n := thisLen(c.This); n > maxElems {
			tooMany("an array", n)
		}
	}
	for _, name := range ap.GetOwnPropertyNames() {
		if name == "constructor" || name == "join" || name == "toString" {
			continue
		}
		if err := wrap(ap, name, lengthCheck); err != nil {
			return err
		}
	}
	// join is rebuilt rather than wrapped, so that its size is checked as
	// it grows: elements can be arrays whose own join is large.
	joining := map[*goja.Object]bool{} // cycles join to "", as in goja and V8
	if err := ap.DefineDataProperty("join", vm.ToValue(func(c goja.FunctionCall) goja.Value {
		o := c.This.ToObject(vm)
		if joining[o] {
			return vm.ToValue("")
		}
		joining[o] = true
		defer delete(joining, o)
		return joinBounded(vm, o, c, maxBuilt, maxElems, tooLong, tooMany)
	}), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	if err := wrap(ap, "toString", lengthCheck); err != nil {
		return err
	}
	if err := wrap(ap, "flat", func(c goja.FunctionCall) {
		depth := int64(1)
		if d := c.Argument(0); !goja.IsUndefined(d) {
			depth = d.ToInteger()
		}
		if n := flatLen(vm, c.This, depth, maxElems, 0, 0); n > maxElems {
			tooMany("a flattened array", n)
		}
	}); err != nil {
		return err
	}
	if err := wrap(ap, "concat", func(c goja.FunctionCall) {
		n := thisLen(c.This)
		for _, a := range c.Arguments {
			if o, ok := a.(*goja.Object); ok && o.ClassName() == "Array" {
				n += thisLen(o)
			} else {
				n++
			}
		}
		if n > maxElems {
			tooMany("a concatenated array", n)
		}
	}); err != nil {
		return err
	}
	if err := wrap(object("Array"), "from", func(c goja.FunctionCall) {
		if o, ok := c.Argument(0).(*goja.Object); ok {
			if n := thisLen(o); n > maxElems {
				tooMany("Array.from", n)
			}
		}
	}); err != nil {
		return err
	}

	// JSON.stringify: a small array of references to one large string
	// writes that string once per reference. A replacer tallies what is
	// written; an array replacer (a key allowlist) cannot be combined with
	// it and is refused.
	js := object("JSON")
	orig, ok := goja.AssertFunction(js.Get("stringify"))
	if !ok {
		return fmt.Errorf("no JSON.stringify")
	}
	return js.DefineDataProperty("stringify", vm.ToValue(func(c goja.FunctionCall) goja.Value {
		user, hasUser := goja.AssertFunction(c.Argument(1))
		if r, ok := c.Argument(1).(*goja.Object); ok && !hasUser && r.ClassName() == "Array" {
			panic(vm.NewTypeError("JSON.stringify with an array replacer is not available in the sandbox"))
		}
		var written int64
		tally := func(rc goja.FunctionCall) goja.Value {
			v := rc.Argument(1)
			if hasUser {
				var err error
				if v, err = user(rc.This, rc.Arguments...); err != nil {
					panic(err)
				}
			}
			written += strLen(rc.Argument(0)) + 8
			if s, ok := v.(goja.String); ok {
				written += int64(s.Length())
			}
			if written > maxBuilt {
				tooLong("a JSON text", written)
			}
			return v
		}
		v, err := orig(c.This, c.Argument(0), vm.ToValue(tally), c.Argument(2))
		if err != nil {
			panic(err)
		}
		return v
	}), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// joinBounded is Array.prototype.join with its result's size checked as
// each element is written.
func joinBounded(vm *goja.Runtime, o *goja.Object, c goja.FunctionCall, maxChars, maxElems int64, tooLong, tooMany func(string, int64)) goja.Value {
	n := o.Get("length").ToInteger()
	if n > maxElems {
		tooMany("an array", n)
	}
	sep := ","
	if s := c.Argument(0); !goja.IsUndefined(s) {
		sep = s.String()
	}
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		e := o.Get(fmt.Sprint(i))
		if e != nil && !goja.IsUndefined(e) && !goja.IsNull(e) {
			b.WriteString(e.String())
		}
		if int64(b.Len()) > maxChars {
			tooLong("a joined string", int64(b.Len()))
		}
	}
	return vm.ToValue(b.String())
}

// flatLen counts the elements flat(depth) would produce, stopping past
// max; nesting deeper than maxDepth (a cycle under flat(Infinity)) counts
// as past max.
func flatLen(vm *goja.Runtime, v goja.Value, depth, max, acc int64, nest int) int64 {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "Array" {
		return acc + 1
	}
	if nest > maxDepth {
		return max + 1
	}
	n := o.Get("length").ToInteger()
	if depth <= 0 {
		return acc + n
	}
	if n > max {
		return acc + n
	}
	for i := int64(0); i < n && acc <= max; i++ {
		acc = flatLen(vm, o.Get(fmt.Sprint(i)), depth-1, max, acc, nest+1)
	}
	return acc
}
