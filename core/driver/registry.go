package driver

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// BackendDriver is how a backend package registers itself. Its Config type
// must be usable at its zero value; front-ends decode user settings into the
// value NewConfig returns, rejecting unknown keys, and pass it to Open.
type BackendDriver struct {
	// NewConfig returns a pointer to a new zero Config of the backend.
	NewConfig func() any
	// Open opens the backend with cfg, a value returned by NewConfig.
	Open func(ctx context.Context, cfg any) (Backend, error)
	// DefaultPath is the store's file or directory name inside MEMOS_HOME,
	// e.g. "memory.db"; front-ends set the config key "path" to it by default.
	DefaultPath string
}

// EmbedderDriver is how an embedder package registers itself; see BackendDriver.
type EmbedderDriver struct {
	NewConfig func() any
	Open      func(ctx context.Context, cfg any) (Embedder, error)
}

type registry[T any] struct {
	kind string
	mu   sync.RWMutex
	m    map[string]T
}

func (r *registry[T]) register(name string, d T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic("memos: Register" + r.kind + " with an empty name")
	}
	if _, dup := r.m[name]; dup {
		panic("memos: Register" + r.kind + " called twice for " + name)
	}
	if r.m == nil {
		r.m = make(map[string]T)
	}
	r.m[name] = d
}

func (r *registry[T]) lookup(name string) (T, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.m[name]
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: no %s named %q (known: %s)", ErrUnknownName,
			strings.ToLower(r.kind), name, strings.Join(r.namesLocked(), ", "))
	}
	return d, nil
}

func (r *registry[T]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *registry[T]) namesLocked() []string {
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var (
	backends  = registry[BackendDriver]{kind: "Backend"}
	embedders = registry[EmbedderDriver]{kind: "Embedder"}
)

// RegisterBackend makes a backend available by name. It panics if the name is
// empty or already taken; call it from the backend package's init.
func RegisterBackend(name string, d BackendDriver) { backends.register(name, d) }

// LookupBackend returns the backend registered as name, or an ErrUnknownName
// error that lists the known names.
func LookupBackend(name string) (BackendDriver, error) { return backends.lookup(name) }

// BackendNames lists the registered backends, sorted.
func BackendNames() []string { return backends.names() }

// RegisterEmbedder makes an embedder available by name; see RegisterBackend.
func RegisterEmbedder(name string, d EmbedderDriver) { embedders.register(name, d) }

// LookupEmbedder returns the embedder registered as name, or ErrUnknownName.
func LookupEmbedder(name string) (EmbedderDriver, error) { return embedders.lookup(name) }

// EmbedderNames lists the registered embedders, sorted.
func EmbedderNames() []string { return embedders.names() }

// NewBackendDriver adapts a backend package's typed Open to the registry:
// NewConfig returns a new *C, and Open accepts a *C or a C.
func NewBackendDriver[C any, B Backend](name, defaultPath string, open func(context.Context, C) (B, error)) BackendDriver {
	return BackendDriver{
		NewConfig: func() any { return new(C) },
		Open: func(ctx context.Context, cfg any) (Backend, error) {
			c, err := typedConfig[C](name, cfg)
			if err != nil {
				return nil, err
			}
			b, err := open(ctx, c)
			if err != nil {
				return nil, err // not b: a typed nil in an interface is not nil
			}
			return b, nil
		},
		DefaultPath: defaultPath,
	}
}

// NewEmbedderDriver adapts an embedder package's typed Open to the registry;
// see NewBackendDriver.
func NewEmbedderDriver[C any, E Embedder](name string, open func(context.Context, C) (E, error)) EmbedderDriver {
	return EmbedderDriver{
		NewConfig: func() any { return new(C) },
		Open: func(ctx context.Context, cfg any) (Embedder, error) {
			c, err := typedConfig[C](name, cfg)
			if err != nil {
				return nil, err
			}
			e, err := open(ctx, c)
			if err != nil {
				return nil, err
			}
			return e, nil
		},
	}
}

func typedConfig[C any](name string, cfg any) (C, error) {
	var zero C
	switch c := cfg.(type) {
	case *C:
		if c != nil {
			return *c, nil
		}
	case C:
		return c, nil
	}
	return zero, invalidf("%s: config is a %T, want a %T", name, cfg, &zero)
}
