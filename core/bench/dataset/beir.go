package dataset

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memos-go/memos/core"
)

// beirSplits are the qrels files tried, in order, when Options.Split is "".
var beirSplits = []string{"test", "dev", "train"}

// LoadBEIR reads a data set in BEIR's layout from dir: corpus.jsonl
// ({"_id", "title", "text"} per line), queries.jsonl ({"_id", "text"}) and
// qrels/<split>.tsv ("query-id corpus-id score", tab separated, with a
// header line). The files may be gzipped.
//
// The corpus is one store. Each document is a raw memory (type document)
// with content "<title>\n\n<text>" (cut at core.MaxContentBytes), source
// "beir:<name>#<_id>", key its _id. The queries are those the qrels judge
// relevant to at least one document of the corpus (score > 0, the graded
// relevance), in the order of queries.jsonl. BEIR reports nDCG@10 and
// recall@100, so the data set asks for k = 100 besides the caller's.
func LoadBEIR(dir string, opts Options) (*Dataset, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("beir: %w", err)
	}
	name := filepath.Base(filepath.Clean(dir))
	d := &Dataset{Name: "beir:" + name, ExtraK: []int{100}}
	c := Corpus{Name: name}

	split := opts.Split
	var qrelsPath string
	if split != "" {
		qrelsPath = filepath.Join(dir, "qrels", split+".tsv")
	} else {
		for _, s := range beirSplits {
			p := filepath.Join(dir, "qrels", s+".tsv")
			if _, err := os.Stat(p); err == nil {
				split, qrelsPath = s, p
				break
			}
			if _, err := os.Stat(p + ".gz"); err == nil {
				split, qrelsPath = s, p
				break
			}
		}
		if qrelsPath == "" {
			return nil, fmt.Errorf("beir: %s: no qrels/test.tsv, qrels/dev.tsv or qrels/train.tsv: %w", dir, fs.ErrNotExist)
		}
	}

	keys := map[string]bool{}
	var clipped int
	err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(line int, raw []byte) error {
		var doc struct {
			ID    beirID `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		content := strings.TrimSpace(doc.Text)
		if t := strings.TrimSpace(doc.Title); t != "" {
			content = strings.TrimSpace(t + "\n\n" + content)
		}
		if doc.ID == "" || content == "" || keys[string(doc.ID)] {
			return nil
		}
		content, cut := clip(content)
		if cut {
			clipped++
		}
		keys[string(doc.ID)] = true
		c.Docs = append(c.Docs, Doc{Key: string(doc.ID), Input: core.Input{
			Content: content,
			Type:    core.TypeDocument,
			Source:  "beir:" + name + "#" + string(doc.ID),
		}})
		return nil
	})
	if err != nil {
		return nil, err
	}

	qrels, dropped, err := readQrels(qrelsPath, keys)
	if err != nil {
		return nil, err
	}
	found := 0
	err = readJSONL(filepath.Join(dir, "queries.jsonl"), func(line int, raw []byte) error {
		var q struct {
			ID   beirID `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &q); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		rel := qrels[string(q.ID)]
		if len(rel) == 0 || strings.TrimSpace(q.Text) == "" {
			return nil
		}
		found++
		c.Queries = append(c.Queries, Query{ID: string(q.ID), Text: q.Text, Relevant: rel})
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.Queries = limitQueries(c.Queries, opts.MaxQueries)
	if len(c.Docs) == 0 || len(c.Queries) == 0 {
		return nil, fmt.Errorf("%w: beir: %s: %d documents and %d judged queries; need at least one of each", core.ErrInvalid, dir, len(c.Docs), len(c.Queries))
	}
	d.Corpora = []Corpus{c}
	d.Notes = append(d.Notes, fmt.Sprintf("%s: qrels split %s, %d judged queries", d.Name, split, len(c.Queries)))
	if missing := len(qrels) - found; missing > 0 || dropped > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%s: %d judged queries missing from queries.jsonl; %d judgements of documents not in the corpus dropped", d.Name, missing, dropped))
	}
	if clipped > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%s: %d documents cut to %d bytes", d.Name, clipped, core.MaxContentBytes))
	}
	return d, nil
}

// beirID accepts an _id written as a JSON string or number.
type beirID string

func (id *beirID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*id = beirID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("_id %s is neither a string nor a number", b)
	}
	*id = beirID(n.String())
	return nil
}

// openBEIR opens path, or path.gz when only that exists.
func openBEIR(path string) (io.ReadCloser, error) {
	f, err := openData(path)
	if errors.Is(err, fs.ErrNotExist) {
		if g, gerr := openData(path + ".gz"); gerr == nil {
			return g, nil
		}
	}
	return f, err
}

// readJSONL calls fn for every non-blank line of path.
func readJSONL(path string, fn func(line int, raw []byte) error) error {
	f, err := openBEIR(path)
	if err != nil {
		return fmt.Errorf("beir: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := fn(n, sc.Bytes()); err != nil {
			return fmt.Errorf("%w: beir: %s: %v", core.ErrInvalid, path, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("beir: %s: %w", path, err)
	}
	return nil
}

// readQrels reads "query-id corpus-id score" lines, keeping positive
// scores of documents in keys; it returns how many judgements named other
// documents.
func readQrels(path string, keys map[string]bool) (map[string]map[string]float64, int, error) {
	f, err := openBEIR(path)
	if err != nil {
		return nil, 0, fmt.Errorf("beir: %w", err)
	}
	defer f.Close()
	out := map[string]map[string]float64{}
	dropped := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || (n == 1 && fields[0] == "query-id") {
			continue
		}
		// TREC's four-column form "qid 0 docid score" is accepted too.
		if len(fields) == 4 {
			fields = []string{fields[0], fields[2], fields[3]}
		}
		if len(fields) != 3 {
			return nil, 0, fmt.Errorf("%w: beir: %s line %d: want \"query-id corpus-id score\", got %q", core.ErrInvalid, path, n, sc.Text())
		}
		score, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: beir: %s line %d: score %q is not a number", core.ErrInvalid, path, n, fields[2])
		}
		if score <= 0 {
			continue
		}
		if !keys[fields[1]] {
			dropped++
			continue
		}
		if out[fields[0]] == nil {
			out[fields[0]] = map[string]float64{}
		}
		out[fields[0]][fields[1]] = score
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("beir: %s: %w", path, err)
	}
	return out, dropped, nil
}
