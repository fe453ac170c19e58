package wire

import (
	"encoding/json"
	"io"
	"mime/multipart"
	"path"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/inputlimits"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Form is a testset upload (multipart/form-data) read as a stream: the
// fields sent before the file part are known when the file is parsed; the
// file is never buffered.
type Form struct {
	Fields map[string]string
	Rows   []testcases.Row // the "file" part's rows
	// FileName is the "file" part's file name as the client sent it.
	FileName string
	found    bool
}

// ReadForm parses a multipart upload, importing the "file" part with the
// type given by file_type (sent before the file, as every HTTP client
// library orders fields), else the file name's extension. Text fields get
// the checks and limits of JSON bodies (FormField); a missing file or an
// unknown file_type is a 422 naming it.
func ReadForm(mr *multipart.Reader, limits tcfile.Limits) (*Form, error) {
	f := &Form{Fields: map[string]string{}}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errs.New(errs.Invalid, "testsets.bad_form", "Malformed multipart body: "+err.Error())
		}
		if part.FormName() == "file" {
			f.FileName = part.FileName()
			if f.Rows, err = importPart(part, f.Fields["file_type"], limits); err != nil {
				return nil, err
			}
			f.found = true
			continue
		}
		v, err := io.ReadAll(io.LimitReader(part, 1<<20))
		if err != nil {
			return nil, errs.New(errs.Invalid, "testsets.bad_form", "Malformed multipart body: "+err.Error())
		}
		name := part.FormName()
		if err := FormField(name, string(v)); err != nil {
			return nil, err
		}
		f.Fields[name] = string(v)
	}
	if !f.found {
		return nil, errs.Field("Field required", nil, "body", "file")
	}
	if err := rowsText(f.Rows); err != nil {
		return nil, err
	}
	if ft, ok := f.Fields["file_type"]; ok && ft != "csv" && ft != "json" {
		return nil, errs.Field("Input should be 'csv' or 'json'", ft, "body", "file_type")
	}
	return f, nil
}

// rowsText checks the flags, tags and meta of file rows (stored as jsonb;
// the row data is stored as json and needs no check).
func rowsText(rows []testcases.Row) error {
	for i := range rows {
		for _, f := range []struct {
			key string
			o   *canon.Object
		}{{"flags", rows[i].Flags}, {"tags", rows[i].Tags}, {"meta", rows[i].Meta}} {
			if f.o == nil {
				continue
			}
			if err := inputlimits.CheckJSONText(canon.AppendCompact(nil, f.o), nil, "body", "file", i, f.key); err != nil {
				return err
			}
		}
	}
	return nil
}

func importPart(part *multipart.Part, fileType string, limits tcfile.Limits) ([]testcases.Row, error) {
	if fileType == "" {
		fileType = "csv"
		if strings.EqualFold(path.Ext(part.FileName()), ".json") {
			fileType = "json"
		}
	}
	switch fileType {
	case "csv":
		return tcfile.ReadCSV(part, limits)
	case "json":
		return tcfile.ReadJSON(part, limits)
	}
	return nil, errs.Field("Input should be 'csv' or 'json'", fileType, "body", "file_type")
}

// Header reads testset_name, _description, _tags and _meta from the form
// over the stored header (nil for a create).
func (form *Form) Header(cur *versioned.Header) (versioned.Header, error) {
	var h versioned.Header
	if cur != nil {
		h = *cur
	}
	if v, ok := form.Fields["testset_name"]; ok {
		h.Name = &v
	}
	if v, ok := form.Fields["testset_description"]; ok {
		h.Description = &v
	}
	for _, f := range []struct {
		key string
		dst *json.RawMessage
	}{{"testset_tags", &h.Tags}, {"testset_meta", &h.Meta}} {
		v, ok := form.Fields[f.key]
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return h, errs.New(errs.Invalid, "testsets.bad_form", f.key+" must be a JSON object.")
		}
		if f.key == "testset_tags" && !ValidTags(m) {
			return h, errs.New(errs.Invalid, "testsets.bad_form", "testset_tags values must be booleans, strings or nested objects of them.")
		}
		*f.dst = Compact(json.RawMessage(v))
	}
	return h, nil
}
