package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// docIndex reads doc comments from the repository's Go sources: the
// comments on struct fields, and the values of simple constants that those
// comments name.
type docIndex struct {
	root string
	pkgs map[string]*pkgDocs // by import path
}

type pkgDocs struct {
	structs map[string]*ast.StructType
	consts  map[string]string // exported constant → its value, as Markdown
	// refs maps an exported constant defined as another package's
	// (DefaultNamespace = driver.DefaultNamespace) to that package and name.
	refs    map[string][2]string
	imports map[string]string // package name → import path, over all files
	// aliases maps an exported type alias of another package's type
	// (GovernConfig = govern.Config) to that package and name.
	aliases map[string][2]string
}

func newDocIndex(root string) *docIndex {
	return &docIndex{root: root, pkgs: map[string]*pkgDocs{}}
}

// pkg parses the package at import path p (inside this module) once.
func (d *docIndex) pkg(p string) *pkgDocs {
	if pd, ok := d.pkgs[p]; ok {
		return pd
	}
	pd := &pkgDocs{structs: map[string]*ast.StructType{}, consts: map[string]string{}, refs: map[string][2]string{}, imports: map[string]string{}, aliases: map[string][2]string{}}
	d.pkgs[p] = pd
	rel, ok := strings.CutPrefix(p, modulePath)
	if !ok {
		return pd
	}
	dir := filepath.Join(d.root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return pd
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			continue
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			pd.imports[name] = path
		}
		fileImports := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			fileImports[name] = path
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if st, ok := s.Type.(*ast.StructType); ok {
						pd.structs[s.Name.Name] = st
					}
					if sel, ok := s.Type.(*ast.SelectorExpr); ok && s.Assign.IsValid() && s.Name.IsExported() {
						if x, ok := sel.X.(*ast.Ident); ok && fileImports[x.Name] != "" {
							pd.aliases[s.Name.Name] = [2]string{fileImports[x.Name], sel.Sel.Name}
						}
					}
				case *ast.ValueSpec:
					if gd.Tok != token.CONST || len(s.Names) != 1 || len(s.Values) != 1 || !s.Names[0].IsExported() {
						continue
					}
					switch v := s.Values[0].(type) {
					case *ast.BasicLit:
						if v.Kind == token.STRING {
							u, _ := strconv.Unquote(v.Value)
							pd.consts[s.Names[0].Name] = "`" + u + "`"
						} else {
							pd.consts[s.Names[0].Name] = strings.ReplaceAll(v.Value, "_", "")
						}
					case *ast.SelectorExpr:
						if x, ok := v.X.(*ast.Ident); ok && fileImports[x.Name] != "" {
							pd.refs[s.Names[0].Name] = [2]string{fileImports[x.Name], v.Sel.Name}
						}
					}
				}
			}
		}
	}
	return pd
}

// fieldDoc returns the doc comment of field name of struct typ in package
// pkgPath, as one paragraph. A field without a comment of its own that
// the comment of an earlier field names shares that comment ("KeywordWeight
// and VectorWeight weight …"): lead then names the earlier field.
func (d *docIndex) fieldDoc(pkgPath, typ, name string) (doc, lead string) {
	pd := d.pkg(pkgPath)
	st := pd.structs[typ]
	if st == nil {
		return "", ""
	}
	prev, prevDoc := "", ""
	for _, f := range st.Fields.List {
		text := strings.TrimSpace(f.Doc.Text())
		for _, n := range f.Names {
			if n.Name != name {
				continue
			}
			if text == "" {
				if line := strings.TrimSpace(f.Comment.Text()); line != "" {
					return oneParagraph(line), ""
				}
			}
			if text == "" && prev != "" && regexp.MustCompile(`\b`+name+`\b`).MatchString(prevDoc) {
				return "", prev
			}
			return oneParagraph(text), ""
		}
		if text != "" && len(f.Names) > 0 {
			prev, prevDoc = f.Names[0].Name, text
		}
	}
	return "", ""
}

// constValue returns the value of an exported constant of pkgPath.
func (d *docIndex) constValue(pkgPath, name string) (string, bool) {
	pd := d.pkg(pkgPath)
	if v, ok := pd.consts[name]; ok {
		return v, true
	}
	if r, ok := pd.refs[name]; ok {
		return d.constValue(r[0], r[1])
	}
	return "", false
}

func oneParagraph(s string) string { return strings.Join(strings.Fields(s), " ") }

var identRE = regexp.MustCompile(`\b(?:([a-z][a-z0-9]*)\.)?([A-Z][A-Za-z0-9]*)\b`)

// rewrite replaces, in a doc comment of package pkgPath, Go field names
// with the configuration keys they decode from (names maps one to the
// other) and constants with their values.
func (d *docIndex) rewrite(pkgPath, doc string, names map[string]string) string {
	pd := d.pkg(pkgPath)
	return identRE.ReplaceAllStringFunc(doc, func(m string) string {
		sub := identRE.FindStringSubmatch(m)
		qual, id := sub[1], sub[2]
		if qual != "" {
			// pkg.Name: a constant of an imported package.
			if p, ok := pd.imports[qual]; ok {
				if v, ok := d.constValue(p, id); ok {
					return v
				}
			}
			return m
		}
		if k, ok := names[id]; ok {
			return "`" + k + "`"
		}
		if v, ok := d.constValue(pkgPath, id); ok {
			return v
		}
		return m
	})
}

// typeName is how the reference names t: as Go writes it, except that a
// type of an internal package that core re-exports by an alias
// (core.GovernConfig = govern.Config) goes by the alias, the name a user
// can import.
func (d *docIndex) typeName(t reflect.Type) string {
	base := t
	for base.Kind() == reflect.Pointer || base.Kind() == reflect.Slice {
		base = base.Elem()
	}
	name := t.String()
	if !strings.Contains(base.PkgPath(), "/internal/") {
		return name
	}
	for alias, target := range d.pkg(modulePath + "/core").aliases {
		if target == [2]string{base.PkgPath(), base.Name()} {
			short := base.PkgPath()[strings.LastIndex(base.PkgPath(), "/")+1:]
			return strings.Replace(name, short+"."+base.Name(), "core."+alias, 1)
		}
	}
	return name
}
