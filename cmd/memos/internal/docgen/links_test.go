package main

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLinks checks every link in README.md and docs/**/*.md: a relative
// link must name a file or directory of the repository, and its #anchor a
// heading (or an explicit <a id>) of that page, as GitHub derives anchors;
// an external link must be a well-formed http(s) or mailto URL (it is not
// fetched).
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	pages := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(page)
		if err != nil {
			return nil
		}
		anchors[page] = pageAnchors(string(b))
		return anchors[page]
	}
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, l := range pageLinks(string(b)) {
			checked++
			where := rel + ":" + strconv.Itoa(l.line)
			if msg := checkLink(root, page, l.target, anchorsOf); msg != "" {
				t.Errorf("%s: link %q %s", where, l.target, msg)
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no links to check")
	}
}

func checkLink(root, page, target string, anchorsOf func(string) map[string]bool) string {
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		switch {
		case u.Scheme == "mailto" && u.Opaque != "":
			return ""
		case (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
			return ""
		}
		return "is not a well-formed external link"
	}
	path, frag, _ := strings.Cut(target, "#")
	file := page
	if path != "" {
		p, err := url.PathUnescape(path)
		if err != nil {
			return "has a malformed path"
		}
		if strings.HasPrefix(p, "/") {
			file = filepath.Join(root, filepath.FromSlash(p))
		} else {
			file = filepath.Join(filepath.Dir(page), filepath.FromSlash(p))
		}
		if r, err := filepath.Rel(root, file); err != nil || strings.HasPrefix(r, "..") {
			return "leaves the repository"
		}
		if _, err := os.Stat(file); err != nil {
			return "names no file of the repository"
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(file, ".md") {
		return "has an anchor into a file that is not Markdown"
	}
	if !anchorsOf(file)[frag] {
		return "names no heading of " + filepath.Base(file)
	}
	return ""
}

type link struct {
	target string
	line   int
}

var (
	fenceRE     = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode  = regexp.MustCompile("`+[^`]*`+")
	inlineLink  = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef      = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	hrefRE      = regexp.MustCompile(`<a\s[^>]*href="([^"]*)"`)
	headingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor  = regexp.MustCompile(`<a\s[^>]*(?:id|name)="([^"]+)"`)
	linkTextRE  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRE   = regexp.MustCompile(`<[^>]+>`)
	emphasisRE  = regexp.MustCompile(`(\*+|_{2,})`)
	escapedChar = regexp.MustCompile(`\\(.)`)
)

// pageLinks lists the link targets of a Markdown page outside code.
func pageLinks(md string) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if fenceRE.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		text := inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			out = append(out, link{m[1], i + 1})
		}
		if m := refDef.FindStringSubmatch(text); m != nil {
			out = append(out, link{m[1], i + 1})
		}
		for _, m := range hrefRE.FindAllStringSubmatch(text, -1) {
			out = append(out, link{m[1], i + 1})
		}
	}
	return out
}

// pageAnchors lists the anchors GitHub gives a page's headings (the second
// heading of the same text gets -1, the third -2, …) and its <a id> tags.
func pageAnchors(md string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if fenceRE.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := linkTextRE.ReplaceAllString(m[2], "$1")
		text = htmlTagRE.ReplaceAllString(text, "")
		text = emphasisRE.ReplaceAllString(text, "")
		text = escapedChar.ReplaceAllString(text, "$1")
		slug := anchor(text)
		if n := count[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		count[slug]++
	}
	return out
}
