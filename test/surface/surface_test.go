// Package surface measures the exported surface of the module: how many exported identifiers each
// package declares, how many of them no other package uses, and which exported functions and methods
// only tests reach. It parses source with go/parser alone (no type checking), so method use is judged
// by name: a method counts as used wherever a selector of that name appears, which over-counts use and
// never wrongly reports a used method as unused.
//
// Run `go test ./test/surface -run TestSurface -v` for the table; the ratchet below fails when the
// cleaned-up areas grow their surface again.
package surface

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/forgectx/forgectx"

// decl is one exported top-level identifier of a package's production (non-test) files.
type decl struct {
	pkg  string // import path
	name string // identifier, or Recv.Method for methods
	kind string // func, method, type, var, const
	sel  string // the name a selector uses (method name for methods)
	doc  bool   // has a doc comment (its own, its group's, or a trailing one)
	pos  string
}

// use records where a name of a package is referenced: from production code or from a test file,
// and from the declaring package or another one.
type use struct{ prodOwn, prodOther, testAny, testOther bool }

type scan struct {
	decls   []decl
	refs    map[string]*use // key: pkg + "." + name (package-level identifiers)
	methods map[string]*use // key: method name, with the declaring package unknown
	methPkg map[string]map[string]bool
}

// repoRoot is the module root: go test runs in this package's directory, two levels below it.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

func collect(t *testing.T, root string) *scan {
	t.Helper()
	s := &scan{refs: map[string]*use{}, methods: map[string]*use{}, methPkg: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	type parsed struct {
		file *ast.File
		pkg  string
		test bool
	}
	var files []parsed
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		files = append(files, parsed{f, path.Join(module, filepath.ToSlash(rel)), strings.HasSuffix(p, "_test.go")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, f := range files {
		if f.test {
			continue
		}
		for _, d := range exportedDecls(fset, f.pkg, f.file) {
			s.decls = append(s.decls, d)
			if d.kind == "method" {
				if s.methPkg[d.sel] == nil {
					s.methPkg[d.sel] = map[string]bool{}
				}
				s.methPkg[d.sel][d.pkg] = true
			} else {
				declared[d.pkg+"."+d.name] = true
			}
		}
	}
	for _, f := range files {
		s.references(f.file, f.pkg, f.test, declared)
	}
	return s
}

func exportedDecls(fset *token.FileSet, pkg string, f *ast.File) []decl {
	var out []decl
	add := func(id *ast.Ident, kind, name, sel string, doc bool) {
		if id.IsExported() {
			out = append(out, decl{pkg: pkg, name: name, kind: kind, sel: sel, doc: doc, pos: fset.Position(id.Pos()).String()})
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				add(d.Name, "func", d.Name.Name, d.Name.Name, d.Doc != nil)
				continue
			}
			recv := recvName(d.Recv.List[0].Type)
			if ast.IsExported(recv) {
				add(d.Name, "method", recv+"."+d.Name.Name, d.Name.Name, d.Doc != nil)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					add(sp.Name, "type", sp.Name.Name, sp.Name.Name, sp.Doc != nil || d.Doc != nil)
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range sp.Names {
						add(n, kind, n.Name, n.Name, sp.Doc != nil || sp.Comment != nil || d.Doc != nil)
					}
				}
			}
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// references records every use of an exported name in one file: qualified identifiers (pkg.Name) for
// other packages, bare identifiers for the file's own package, and selectors by name for methods.
func (s *scan) references(f *ast.File, pkg string, test bool, declared map[string]bool) {
	imports := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	// External test packages (package x_test) belong to the package under test.
	own := pkg
	defs := map[*ast.Ident]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			defs[d.Name] = true
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					defs[sp.Name] = true
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						defs[n] = true
					}
				}
			}
		}
	}
	mark := func(m map[string]*use, key string, other bool) {
		u := m[key]
		if u == nil {
			u = &use{}
			m[key] = u
		}
		switch {
		case test && (other || strings.HasSuffix(f.Name.Name, "_test")):
			u.testAny, u.testOther = true, true
		case test:
			u.testAny = true
		case other:
			u.prodOther = true
		default:
			u.prodOwn = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if p, ok := imports[x.Name]; ok && strings.HasPrefix(p, module) {
					mark(s.refs, p+"."+n.Sel.Name, p != own)
					return false
				}
			}
			if n.Sel.IsExported() {
				// A method selector: which package declares the method is unknown without types, so
				// a use counts as "other package" unless the file's package is the only declarer.
				pkgs := s.methPkg[n.Sel.Name]
				mark(s.methods, n.Sel.Name, !(len(pkgs) == 1 && pkgs[own]))
			}
		case *ast.Ident:
			if !defs[n] && n.IsExported() && declared[own+"."+n.Name] {
				mark(s.refs, own+"."+n.Name, false)
			}
		}
		return true
	})
}

// interfaceMethods are satisfied implicitly (fmt, errors, encoding, net/http, io, sort); their use
// never shows as a selector, so they are neither unused nor test-only.
var interfaceMethods = map[string]bool{
	"String": true, "Error": true, "Unwrap": true, "Is": true, "As": true, "Format": true, "GoString": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true,
	"ServeHTTP": true, "RoundTrip": true, "Read": true, "Write": true, "Close": true,
	"Len": true, "Less": true, "Swap": true, "Timeout": true, "Temporary": true,
}

type pkgFigures struct {
	exported, unusedOutside int
	undocumented            []string
	testOnly                []string
}

func (s *scan) figures() map[string]*pkgFigures {
	out := map[string]*pkgFigures{}
	for _, d := range s.decls {
		pf := out[d.pkg]
		if pf == nil {
			pf = &pkgFigures{}
			out[d.pkg] = pf
		}
		pf.exported++
		// Methods of the standard interfaces (Error, Unwrap, String, ...) are documented by them.
		if !d.doc && !(d.kind == "method" && interfaceMethods[d.sel]) {
			pf.undocumented = append(pf.undocumented, d.name)
		}
		var u *use
		if d.kind == "method" {
			if interfaceMethods[d.sel] {
				continue
			}
			u = s.methods[d.sel]
		} else {
			u = s.refs[d.pkg+"."+d.name]
		}
		if u == nil {
			u = &use{}
		}
		if !u.prodOther && !strings.HasPrefix(d.pkg, module+"/cmd/") {
			pf.unusedOutside++
		}
		if os.Getenv("SURFACE_CANDIDATES") != "" && inCleanedArea(d.pkg) && d.kind != "method" && !u.prodOther && !u.testOther {
			fmt.Printf("CAND %s %s %s\n", strings.TrimPrefix(d.pkg, module+"/"), d.name, d.kind)
		}
		// Helpers under test/ exist for tests; only production packages count as test-only.
		if (d.kind == "func" || d.kind == "method") && !u.prodOwn && !u.prodOther && u.testAny && !strings.HasPrefix(d.pkg, module+"/test/") {
			pf.testOnly = append(pf.testOnly, d.name)
		}
	}
	return out
}

// cleanedAreas are the packages whose surface was reduced to what other packages use; the ratchet
// keeps them there.
var cleanedAreas = []string{
	"internal/snapshot", "internal/filter", "internal/status", "internal/event",
	"internal/review/reviewctx", "internal/review/reviewmcp", "internal/review/reviewpub", "internal/review/reviewresult",
	"internal/forge/github", "internal/forge/gitlab", "internal/forge/cassette", "internal/forge/retry",
	"internal/forge/stats",
	"internal/platform/inputfile", "internal/platform/logging", "internal/platform/parallel",
	"internal/platform/safeout", "internal/platform/version",
}

func inCleanedArea(pkg string) bool {
	rel := strings.TrimPrefix(pkg, module+"/")
	for _, a := range cleanedAreas {
		if rel == a || strings.HasPrefix(rel, a+"/") {
			return true
		}
	}
	return false
}

// Ceilings for the cleaned areas: exported functions and methods that only tests reach, and exported
// identifiers that no other package uses. Lower them when the surface shrinks; never raise them.
const (
	maxTestOnlyInAreas      = 6
	maxUnusedOutsideInAreas = 233
)

func TestSurface(t *testing.T) {
	s := collect(t, repoRoot(t))
	figs := s.figures()
	pkgs := make([]string, 0, len(figs))
	for p := range figs {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var b strings.Builder
	var total, unused, testOnly, areaTestOnly, areaUnused, areaUndocumented int
	fmt.Fprintf(&b, "%-60s %8s %8s %8s\n", "package", "exported", "unused", "testonly")
	for _, p := range pkgs {
		f := figs[p]
		total += f.exported
		unused += f.unusedOutside
		testOnly += len(f.testOnly)
		if inCleanedArea(p) {
			areaTestOnly += len(f.testOnly)
			areaUnused += f.unusedOutside
			areaUndocumented += len(f.undocumented)
			for _, n := range f.undocumented {
				t.Errorf("%s.%s is exported without a doc comment", strings.TrimPrefix(p, module+"/"), n)
			}
		}
		fmt.Fprintf(&b, "%-60s %8d %8d %8d\n", strings.TrimPrefix(p, module+"/"), f.exported, f.unusedOutside, len(f.testOnly))
		for _, n := range f.testOnly {
			fmt.Fprintf(&b, "    test-only: %s\n", n)
		}
	}
	fmt.Fprintf(&b, "TOTAL exported=%d unused-outside=%d test-only=%d; cleaned areas: unused-outside=%d test-only=%d undocumented=%d\n",
		total, unused, testOnly, areaUnused, areaTestOnly, areaUndocumented)
	t.Log("\n" + b.String())
	if areaTestOnly > maxTestOnlyInAreas {
		t.Errorf("cleaned areas export %d functions or methods only tests reach (ceiling %d): move them to export_test.go or unexport them",
			areaTestOnly, maxTestOnlyInAreas)
	}
	if areaUnused > maxUnusedOutsideInAreas {
		t.Errorf("cleaned areas export %d identifiers no other package uses (ceiling %d): unexport them",
			areaUnused, maxUnusedOutsideInAreas)
	}
}
