package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeJSON decodes a request body (a JSON object when v points to a
// struct) into v, more strictly than encoding/json: every string must be valid
// UTF-8 without lone surrogate escapes (encoding/json would pass U+FFFD
// instead), keys must match field names exactly (encoding/json ignores
// case), and each value must have its field's JSON type. Unknown keys are
// refused unless allowUnknown. Every error is a requestError naming the
// field by its JSON path (messages[1].content) in the API's words, never Go's.
func decodeJSON(body []byte, v any, allowUnknown bool) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return invalid("body", "invalid JSON at byte %d: %v", syn.Offset, err)
		}
		return invalid("body", "invalid JSON: %v", err)
	}
	if dec.More() {
		return invalid("body", "trailing data after the JSON object")
	}
	w := &jsonWalker{b: raw, allowUnknown: allowUnknown}
	t := reflect.TypeOf(v).Elem()
	w.space()
	if t.Kind() == reflect.Struct && w.peek() != '{' {
		return invalid("body", "must be a JSON object")
	}
	if err := w.value("", t); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("body", "%v", err) // not reached: the walk checked what Unmarshal does
	}
	return nil
}

// jsonWalker checks syntactically valid JSON against a Go type.
type jsonWalker struct {
	b            []byte
	i            int
	allowUnknown bool
}

func (w *jsonWalker) peek() byte { return w.b[w.i] }

func (w *jsonWalker) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

// value checks the value at w.i against t (nil: any value) and moves past
// it; path names it in errors.
func (w *jsonWalker) value(path string, t reflect.Type) error {
	w.space()
	start := w.i
	if w.peek() == 'n' { // null leaves a field at its default
		w.i += len("null")
		return nil
	}
	if t == rawMessageType {
		t = nil
	}
	if t != nil && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		// A type with its own decoding (string or list, text parts): check
		// the strings, then let it judge the shape, naming the field.
		if err := w.value(path, nil); err != nil {
			return err
		}
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(w.b[start:w.i]); err != nil {
			var re *requestError
			if errors.As(err, &re) {
				return invalid(joinPath(path, re.Field), "%s", re.Message)
			}
			return invalid(path, "%v", err)
		}
		return nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Interface {
		t = nil
	}
	switch c := w.peek(); {
	case c == '"':
		if _, err := w.str(path); err != nil {
			return err
		}
		if t != nil && t.Kind() != reflect.String {
			return typeError(path, t, "a string")
		}
	case c == '{':
		return w.object(path, t)
	case c == '[':
		if t != nil && t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return typeError(path, t, "an array")
		}
		var elem reflect.Type
		if t != nil {
			elem = t.Elem()
		}
		w.i++
		for n := 0; ; n++ {
			w.space()
			if w.peek() == ']' {
				w.i++
				return nil
			}
			if n > 0 {
				w.i++ // ','
			}
			if err := w.value(fmt.Sprintf("%s[%d]", path, n), elem); err != nil {
				return err
			}
			w.space()
		}
	case c == 't' || c == 'f':
		lit := "false"
		if c == 't' {
			lit = "true"
		}
		w.i += len(lit)
		if t != nil && t.Kind() != reflect.Bool {
			return typeError(path, t, lit)
		}
	default:
		return w.number(path, t)
	}
	return nil
}

// object checks an object against a struct or map type (or any, t nil).
func (w *jsonWalker) object(path string, t reflect.Type) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		elem = t.Elem()
	default:
		return typeError(path, t, "an object")
	}
	w.i++ // '{'
	for n := 0; ; n++ {
		w.space()
		if w.peek() == '}' {
			w.i++
			return nil
		}
		if n > 0 {
			w.i++ // ','
			w.space()
		}
		key, err := w.str(path)
		if err != nil {
			return err
		}
		w.space()
		w.i++ // ':'
		kpath := joinPath(path, key)
		ft := elem
		if fields != nil {
			var known bool
			if ft, known = fields[key]; !known {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return invalid(kpath, "unknown field; field names are case-sensitive: did you mean %q?", name)
					}
				}
				if !w.allowUnknown {
					return invalid(kpath, "unknown field")
				}
			}
		}
		if err := w.value(kpath, ft); err != nil {
			return err
		}
	}
}

// str reads a string literal, refusing bytes that are not UTF-8 and
// surrogate escapes that do not form a pair, and returns its value.
func (w *jsonWalker) str(path string) (string, error) {
	start := w.i
	w.i++ // '"'
	for {
		c := w.b[w.i]
		switch {
		case c == '"':
			w.i++
			var s string
			json.Unmarshal(w.b[start:w.i], &s) // valid by now
			return s, nil
		case c == '\\':
			if w.b[w.i+1] != 'u' {
				w.i += 2
				continue
			}
			r := hex4(w.b[w.i+2 : w.i+6])
			w.i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || w.i+6 > len(w.b) || w.b[w.i] != '\\' || w.b[w.i+1] != 'u' ||
					utf16.DecodeRune(r, hex4(w.b[w.i+2:w.i+6])) == utf8.RuneError {
					return "", invalid(path, "holds a lone UTF-16 surrogate (\\u%04x); text must be valid Unicode", r)
				}
				w.i += 6
			}
		case c < utf8.RuneSelf:
			w.i++
		default:
			r, n := utf8.DecodeRune(w.b[w.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", invalid(path, "is not valid UTF-8 (byte 0x%02x at offset %d)", c, w.i)
			}
			w.i += n
		}
	}
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 16)
	return rune(n)
}

// number reads a number and checks it fits t.
func (w *jsonWalker) number(path string, t reflect.Type) error {
	start := w.i
	for w.i < len(w.b) && strings.IndexByte("+-.0123456789eE", w.b[w.i]) >= 0 {
		w.i++
	}
	lit := string(w.b[start:w.i])
	if t == nil {
		return nil
	}
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(lit, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(lit, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(lit, t.Bits())
	default:
		return typeError(path, t, "a number")
	}
	if err != nil {
		return typeError(path, t, lit)
	}
	return nil
}

// typeError says what a field takes and what it got.
func typeError(path string, t reflect.Type, got string) error {
	if path == "" {
		path = "body"
	}
	return invalid(path, "expected %s, got %s", jsonKind(t), got)
}

// jsonKind names what a Go type takes, in JSON's words.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

func joinPath(path, key string) string {
	switch {
	case path == "":
		return key
	case key == "" || strings.HasPrefix(key, "["):
		return path + key
	}
	return path + "." + key
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps a struct's JSON keys to their types, as encoding/json
// names them: the tag's name, else the field's; embedded structs' fields
// promoted.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			for k, v := range jsonFields(f.Type) {
				fields[k] = v
			}
			continue
		case name == "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	fieldCache.Store(t, fields)
	return fields
}
