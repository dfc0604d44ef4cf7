package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/tokenizer"
)

type tokenizeCmd struct {
	Model     string `help:"GGUF model whose tokenizer.ggml.* metadata to use (or --tokenizer)." type:"existingfile" xor:"source" placeholder:"FILE.gguf"`
	Tokenizer string `help:"Hugging Face tokenizer.json to use (or --model)." type:"existingfile" xor:"source" placeholder:"tokenizer.json"`
	Special   bool   `help:"Parse special tokens written in the text (<|im_start|>, <s>...)."`
	JSON      bool   `help:"Print JSON."`
	Decode    string `help:"Decode these ids (separated by spaces or commas) instead of encoding."`
	Text      string `arg:"" optional:"" help:"Text to encode (default: standard input)."`
}

// Validate asks for one tokenizer source; kong's required xor group would
// print both flags in the usage as if both were needed.
func (c *tokenizeCmd) Validate() error {
	if c.Model == "" && c.Tokenizer == "" {
		return fmt.Errorf("give --model FILE.gguf or --tokenizer tokenizer.json")
	}
	return nil
}

func (c *tokenizeCmd) Run() error {
	path := c.Model
	if path == "" {
		path = c.Tokenizer
	}
	spec, err := tokenizer.SpecFromFile(path)
	if err != nil {
		return err
	}
	tok, err := tokenizer.New(spec)
	if err != nil {
		return err
	}
	if c.Decode != "" {
		ids, err := parseIDs(c.Decode, tok.Info().VocabSize)
		if err != nil {
			return err
		}
		text := tok.Decode(ids)
		if c.JSON {
			return json.NewEncoder(os.Stdout).Encode(map[string]string{"text": text})
		}
		fmt.Println(text)
		return nil
	}
	text := c.Text
	if text == "" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		text = string(b)
	}
	ids := tok.Encode(text, c.Special)
	if c.JSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"ids": ids, "count": len(ids)})
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	fmt.Println(strings.Join(parts, " "))
	return nil
}

// parseIDs reads "1 2 3" or "1,2,3" and checks each id is in the vocabulary.
func parseIDs(s string, vocab int) ([]int32, error) {
	var ids []int32
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '[' || r == ']' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("--decode: %q is not a token id", f)
		}
		if n < 0 || n >= vocab {
			return nil, fmt.Errorf("--decode: id %d outside the vocabulary of %d", n, vocab)
		}
		ids = append(ids, int32(n))
	}
	return ids, nil
}

func init() {
	commands.Add(cli.Command{Name: "tokenize", Help: "Encode text to token ids (or --decode ids) with a model's tokenizer: --model FILE.gguf or --tokenizer tokenizer.json.", Cmd: &tokenizeCmd{}})
}
