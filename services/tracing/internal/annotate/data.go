package annotate

import (
	"sort"

	"github.com/assayhq/assay/pkg/errs"
)

// spanDataKeys are the keys ag.data keeps (the compatible platform's); anything
// else under data is parked in ag.unsupported, where no read finds it.
var spanDataKeys = map[string]bool{"inputs": true, "outputs": true, "parameters": true, "internals": true}

// Data is the data of a simple trace, annotation or invocation as it is
// stored, and where its outputs came from in the request.
type Data struct {
	// Stored is what goes under ag.data and is answered back.
	Stored map[string]any
	// Outputs is Stored["outputs"], what an evaluator's outputs schema
	// checks; OutputsLoc is where the request had it, for 422s.
	Outputs    any
	OutputsLoc []any
}

// SplitData accepts both shapes clients send: the compatible one,
// {"outputs": …, "inputs"?: {…}, …}, and the outputs alone, such as
// {"success": true} for an exact-match evaluator. Data with none of the
// span's data keys is the outputs alone and is stored as {"outputs": data}.
// Data that mixes them with other keys, a null outputs, or inputs,
// parameters or internals that are not objects would be stored where no
// read finds it (or not at all), so it is a 422 naming the key rather than
// a 200 for something that cannot be read back. needOutputs (annotations)
// makes a missing outputs key a 422 too.
func SplitData(data map[string]any, loc []any, needOutputs bool) (Data, error) {
	at := func(k string) []any { return append(append([]any{}, loc...), k) }
	mixed := false
	for k := range data {
		if spanDataKeys[k] {
			mixed = true
			break
		}
	}
	if !mixed {
		return Data{Stored: map[string]any{"outputs": data}, Outputs: data, OutputsLoc: append([]any{}, loc...)}, nil
	}
	for _, k := range sortedKeys(data) {
		v := data[k]
		switch {
		case !spanDataKeys[k]:
			return Data{}, errs.Field("Extra inputs are not permitted: data holds inputs, outputs, parameters and internals, or the outputs alone", v, at(k)...)
		case v == nil:
			return Data{}, errs.Field("Input should not be null", v, at(k)...)
		case k != "outputs":
			if _, ok := v.(map[string]any); !ok {
				return Data{}, errs.Field("Input should be a valid dictionary", v, at(k)...)
			}
		}
	}
	if _, ok := data["outputs"]; !ok && needOutputs {
		return Data{}, errs.Field("Field required", nil, at("outputs")...)
	}
	return Data{Stored: data, Outputs: data["outputs"], OutputsLoc: at("outputs")}, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
