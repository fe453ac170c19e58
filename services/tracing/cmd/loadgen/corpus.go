package main

// The realistic corpus: text that varies as LLM traffic does, so that
// bytes per span on disk and the cost of compressing spans are measured on
// something like real spans rather than one repeated text (which column
// compression folds down to 17 bytes a span, docs/benchmarks.md).
//
// testdata/corpus.txt is prose written for this benchmark (support
// answers, documentation, meeting notes, code review, a few translations):
// no download, no third-party text; testdata/words.txt, common nouns, verbs
// and adjectives, written for it too. text remixes the prose with a
// word-level Markov chain of order 2 that falls back to order 1 at every
// other word, swaps each of its words that words.txt lists for another of
// the same class, and draws numbers, names and ids in now and then, as
// real prompts carry them: sentences with the structure of language and a
// vocabulary about as wide. What gzip makes of it is its measure
// (TestCorpusVaries): 1 MB of generated text compresses 3.8×, where
// natural English text compresses 2.3× (testdata/corpus.txt, 11 KB) to
// 2.6× (docs/benchmarks.md, 40 KB) and 3.2× (a public-domain book of
// 570 KB); the chain without the swaps gave 6.5×, one repeated text gives
// hundreds, random bytes 1×.

import (
	_ "embed"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

//go:embed testdata/corpus.txt
var corpusText string

// wordsText is three lines of common words written for this benchmark:
// nouns, verbs, adjectives.
//
//go:embed testdata/words.txt
var wordsText string

// chain is a word-level Markov chain over corpusText.
type chain struct {
	words  []string
	next1  [][]uint32             // successors of a word, with repetition (frequency)
	next2  map[[2]uint32][]uint32 // successors of a pair of words
	starts []uint32               // words that start a sentence
	// subst is, for a word of the corpus that is in one of wordsText's
	// classes, that class: texts swap it for another of the class now and
	// then, so their vocabulary is as wide as natural text's (with the
	// corpus's 900 words alone the generated text gzips 5-6×).
	subst [][]string
}

func newChain(text string) *chain {
	c := &chain{next2: map[[2]uint32][]uint32{}}
	ids := map[string]uint32{}
	var seq []uint32
	for _, w := range strings.Fields(text) {
		id, ok := ids[w]
		if !ok {
			id = uint32(len(c.words))
			ids[w] = id
			c.words = append(c.words, w)
		}
		seq = append(seq, id)
	}
	c.subst = make([][]string, len(c.words))
	class := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(wordsText), "\n") {
		ws := strings.Fields(line)
		for _, w := range ws {
			class[w] = ws
		}
	}
	for i, w := range c.words {
		c.subst[i] = class[strings.TrimRight(w, ".,?:;")]
	}
	c.next1 = make([][]uint32, len(c.words))
	for i := 0; i+1 < len(seq); i++ {
		c.next1[seq[i]] = append(c.next1[seq[i]], seq[i+1])
		if i+2 < len(seq) {
			k := [2]uint32{seq[i], seq[i+1]}
			c.next2[k] = append(c.next2[k], seq[i+2])
		}
		if endsSentence(c.words[seq[i]]) {
			c.starts = append(c.starts, seq[i+1])
		}
	}
	return c
}

func endsSentence(w string) bool {
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, ":")
}

// text appends about n bytes of generated prose to b: whole words, a
// paragraph break every few sentences, a number or a name now and then.
func (c *chain) text(r *rand.Rand, b []byte, n int) []byte {
	start := len(b)
	prev, cur := uint32(math.MaxUint32), c.starts[r.IntN(len(c.starts))]
	sentences := 0
	for len(b)-start < n {
		if len(b) > start {
			b = append(b, ' ')
		}
		w := c.words[cur]
		switch x := r.IntN(60); {
		case x == 0 && !endsSentence(w):
			// The values real prompts carry: amounts, ids, names.
			b = strconv.AppendInt(b, int64(r.IntN(10000)), 10)
			b = append(b, ' ')
		case x == 1 && !endsSentence(w):
			b = append(b, names[r.IntN(len(names))]...)
			b = append(b, ' ')
		case x == 2 && !endsSentence(w):
			b = append(b, '#')
			b = strconv.AppendInt(b, int64(100000+r.IntN(900000)), 10)
			b = append(b, ' ')
		}
		if cl := c.subst[cur]; cl != nil {
			b = append(b, cl[r.IntN(len(cl))]...)
			b = append(b, strings.TrimLeft(w, "abcdefghijklmnopqrstuvwxyz")...) // its punctuation
		} else {
			b = append(b, w...)
		}
		if endsSentence(w) {
			sentences++
			if r.IntN(4) == 0 && len(b)-start < n {
				b = append(b, "\n"...)
			}
		}
		var succ []uint32
		if prev != math.MaxUint32 && r.IntN(2) != 0 {
			succ = c.next2[[2]uint32{prev, cur}]
		}
		if len(succ) == 0 {
			succ = c.next1[cur]
		}
		if len(succ) == 0 {
			prev, cur = math.MaxUint32, c.starts[r.IntN(len(c.starts))]
			continue
		}
		prev, cur = cur, succ[r.IntN(len(succ))]
	}
	return b
}

var substEvery, backoffEvery = 2, 2

// names are first names, products and places that prompts mention.
var names = []string{"Anna", "Bilal", "Chen", "Daria", "Emeka", "Fatima", "Goran", "Hana", "Ibrahim", "Jonas",
	"Keiko", "Lucas", "Mei", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Sven", "Tomasz", "Uma", "Viktor",
	"Lisbon", "Nairobi", "Osaka", "Toronto", "Valencia", "Gdansk", "Porto", "Lyon", "Austin", "Bergen",
	"AcmePay", "Northwind", "Contoso", "Globex", "Initech", "Umbrella", "Vandelay", "Hooli", "Stark"}

// lognormal draws a length with the given median and spread (sigma of the
// log), clamped to [lo, hi]: most texts short, a long tail of long ones, as
// prompt and completion lengths are.
func lognormal(r *rand.Rand, median, sigma float64, lo, hi int) int {
	v := int(median * math.Exp(sigma*r.NormFloat64()))
	return max(lo, min(hi, v))
}
