// Package secrets is a project's vault: provider keys and custom LLM
// providers (base URL, headers, models), stored with their key and headers
// sealed by AES-256-GCM and never shown again after creation. The runtime
// reads them decrypted through the registry's internal route (Reveal).
package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// Kind is what a secret holds.
type Kind string

// The secret kinds of the compatible platform's vault.
const (
	KindProviderKey    Kind = "provider_key"    // a key for a standard provider family
	KindCustomProvider Kind = "custom_provider" // an OpenAI-compatible endpoint of the project's own
)

// Header names a secret for people.
type Header struct {
	Name        *string
	Description *string
}

// Data is the part of a secret that is shown: for a provider key only the
// family (Kind, e.g. "openai"); for a custom provider its kind ("custom",
// "azure", ...), URL, API version, models and provider slug. The key and
// the extra headers are never in Data.
type Data struct {
	Kind         string   `json:"kind"`
	Provider     Provider `json:"provider"`
	Models       []Model  `json:"models,omitempty"`
	ProviderSlug string   `json:"provider_slug,omitempty"`
}

// Provider is the shown part of a custom provider's settings.
type Provider struct {
	URL     string `json:"url,omitempty"`
	Version string `json:"version,omitempty"`
}

// Model is one model a custom provider serves.
type Model struct {
	Slug string `json:"slug"`
}

// Secret is a stored secret without its sealed values.
type Secret struct {
	ProjectID   uuid.UUID
	ID          uuid.UUID
	Slug        string
	Kind        Kind
	Header      Header
	Data        Data
	CreatedAt   time.Time
	UpdatedAt   *time.Time
	CreatedByID *uuid.UUID
	UpdatedByID *uuid.UUID
}

// Sealed is what a secret keeps encrypted: the key and, for a custom
// provider, the extra HTTP headers (which often carry credentials too) and
// the URL they were given for. The URL is sealed with them so that they
// open for that URL only: Reveal withholds them from a row whose shown URL
// is another (see TestRevealWithholdsAKeyFromAnotherURL). For is nil in
// values sealed before it existed.
type Sealed struct {
	Key    string            `json:"key,omitempty"`
	Extras map[string]string `json:"extras,omitempty"`
	For    *string           `json:"for,omitempty"`
}

// boundTo reports whether v's key and extras may go to url: they were
// given for it, or sealed before the URL was recorded.
func (v Sealed) boundTo(url string) bool { return v.For == nil || *v.For == url }

// Record is a secret as the store keeps it: Sealed is Cipher.Seal of the
// JSON of a Sealed value, bound to the record's project and id.
type Record struct {
	Secret
	Sealed []byte
}

// Revealed is a secret with its sealed values opened, for the runtime only.
type Revealed struct {
	Secret
	Sealed
}

// Store is the persistence the vault needs; pgstore implements it on
// PostgreSQL. Every method is scoped to one project: a secret of another
// project is absent, never an error that tells it exists.
type Store interface {
	// CreateSecret inserts r. It returns ErrLimit when the project already
	// holds max secrets (the count and the insert are atomic per project,
	// so concurrent creates never exceed max) and ErrSlugTaken when a
	// secret of the project already has r.Slug.
	CreateSecret(ctx context.Context, r Record, max int) error
	// Secret returns the project's secret with id, or nil.
	Secret(ctx context.Context, project, id uuid.UUID) (*Record, error)
	// SecretBySlug returns the project's secret with slug, or nil.
	SecretBySlug(ctx context.Context, project uuid.UUID, slug string) (*Record, error)
	// Secrets returns every secret of the project, oldest first.
	Secrets(ctx context.Context, project uuid.UUID) ([]Record, error)
	// UpdateSecret replaces the slug, kind, header, data, sealed value and
	// update stamps of the secret r.ID of r.ProjectID. It returns false when
	// there is no such secret and ErrSlugTaken when another secret of the
	// project has r.Slug.
	UpdateSecret(ctx context.Context, r Record) (bool, error)
	// DeleteSecret removes the project's secret id; false if absent.
	DeleteSecret(ctx context.Context, project, id uuid.UUID) (bool, error)
}

// ErrNotFound is the 404 of a secret absent from the caller's project.
var ErrNotFound = errs.New(errs.NotFound, "secrets.not_found", "Secret not found.")

// ErrSlugTaken is the 409 of a slug another secret of the project has.
func ErrSlugTaken(slug string) error {
	return errs.Message(errs.Conflict, "secrets.slug_taken",
		"A secret with slug '"+slug+"' already exists in this project.",
		map[string]any{"conflict": map[string]any{"slug": slug}})
}

// ErrLimit is the 409 of a create in a project that holds as many secrets
// as it may; the request is fine, the project's state refuses it.
var ErrLimit = errs.Message(errs.Conflict, "secrets.limit_reached",
	"This project holds the most secrets it may; delete one first.", nil)

// errUnsealStored is the 500 of a stored value that does not open: the
// vault key changed, or the row was copied or damaged. The runtime must
// not fall back silently to no keys.
func errUnsealStored(id uuid.UUID, err error) error {
	return &errs.Error{Kind: errs.Internal, Code: "secrets.unseal",
		Msg: "A stored secret does not open with the configured vault key.", Err: fmt.Errorf("open secret %s: %w", id, err)}
}

// Limits bound a project's vault.
type Limits struct {
	MaxPerProject int // most secrets one project may hold
}

// Service is the vault's use cases.
type Service struct {
	store  Store
	cipher *Cipher
	lim    Limits
	now    func() time.Time
}

// NewService returns the vault over store, sealing with c.
func NewService(store Store, c *Cipher, lim Limits) *Service {
	if lim.MaxPerProject <= 0 {
		lim.MaxPerProject = DefaultMaxPerProject
	}
	return &Service{store: store, cipher: c, lim: lim, now: time.Now}
}

// DefaultMaxPerProject is the secret count limit when none is configured.
const DefaultMaxPerProject = 100

func (s *Service) seal(project, id uuid.UUID, v Sealed) ([]byte, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode sealed value: %w", err)
	}
	return s.cipher.Seal(project, id, plain)
}

func (s *Service) open(r *Record) (Sealed, error) {
	plain, err := s.cipher.Open(r.ProjectID, r.ID, r.Sealed)
	if err != nil {
		return Sealed{}, errUnsealStored(r.ID, err)
	}
	var v Sealed
	if err := json.Unmarshal(plain, &v); err != nil {
		return Sealed{}, errUnsealStored(r.ID, err)
	}
	return v, nil
}

func userOf(sc scope.Scope) *uuid.UUID {
	if sc.UserID == uuid.Nil {
		return nil
	}
	u := sc.UserID
	return &u
}

// Create stores a new secret from a decoded body. The body must hold a
// secret, and a provider key must hold its key.
func (s *Service) Create(ctx context.Context, sc scope.Scope, in Input) (Secret, error) {
	if in.Secret == nil {
		return Secret{}, errs.Field("Field required", nil, "body", "secret")
	}
	if in.Secret.Kind == KindProviderKey && in.Secret.Key == nil {
		return Secret{}, errs.Field("Field required", nil, "body", "secret", "data", "provider", "key")
	}
	r := Record{Secret: Secret{ProjectID: sc.ProjectID, ID: uuid.New(), Kind: in.Secret.Kind,
		Data: in.Secret.Data, CreatedAt: s.now().UTC(), CreatedByID: userOf(sc)}}
	if in.Header != nil {
		r.Header = Header{Name: in.Header.Name, Description: in.Header.Description}
	}
	r.Slug = slugFor(in.Header, in.Secret)
	if r.Kind == KindCustomProvider && r.Data.ProviderSlug == "" {
		r.Data.ProviderSlug = r.Slug
	}
	v := Sealed{Extras: in.Secret.Extras}
	if in.Secret.Key != nil {
		v.Key = *in.Secret.Key
	}
	if r.Kind == KindCustomProvider {
		u := r.Data.Provider.URL
		v.For = &u
	}
	var err error
	if r.Sealed, err = s.seal(r.ProjectID, r.ID, v); err != nil {
		return Secret{}, err
	}
	if err := s.store.CreateSecret(ctx, r, s.lim.MaxPerProject); err != nil {
		return Secret{}, fmt.Errorf("create secret: %w", err)
	}
	return r.Secret, nil
}

// List returns the project's secrets, oldest first, without their keys.
func (s *Service) List(ctx context.Context, sc scope.Scope) ([]Secret, error) {
	rs, err := s.store.Secrets(ctx, sc.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	out := make([]Secret, len(rs))
	for i := range rs {
		out[i] = rs[i].Secret
	}
	return out, nil
}

func (s *Service) find(ctx context.Context, sc scope.Scope, idOrSlug string) (*Record, error) {
	var (
		r   *Record
		err error
	)
	if id, perr := uuid.Parse(idOrSlug); perr == nil {
		r, err = s.store.Secret(ctx, sc.ProjectID, id)
	} else {
		r, err = s.store.SecretBySlug(ctx, sc.ProjectID, idOrSlug)
	}
	if err != nil {
		return nil, fmt.Errorf("read secret: %w", err)
	}
	if r == nil {
		return nil, ErrNotFound
	}
	return r, nil
}

// Get returns the project's secret whose id (a UUID) or slug is idOrSlug.
func (s *Service) Get(ctx context.Context, sc scope.Scope, idOrSlug string) (Secret, error) {
	r, err := s.find(ctx, sc, idOrSlug)
	if err != nil {
		return Secret{}, err
	}
	return r.Secret, nil
}

// Update replaces what the body holds. A header replaces the name and
// description (and the slug when it names one; otherwise the slug stays,
// since runtimes and connections refer to it). A secret replaces the kind
// and data; its key and extra headers, when absent, are kept if the
// secret's kind, provider kind and, for a custom provider, URL are
// unchanged (a key is never shown, so a client cannot send it back), and
// otherwise a provider key must bring its own. A custom provider whose URL
// changes without its key loses the stored key and extra headers rather
// than have the request refused: a client editing the provider sends the
// fields it was shown, never the key, and the owner of a key chose where
// it goes, so an editor pointing the URL elsewhere must give the key there
// himself.
func (s *Service) Update(ctx context.Context, sc scope.Scope, id uuid.UUID, in Input) (Secret, error) {
	cur, err := s.store.Secret(ctx, sc.ProjectID, id)
	if err != nil {
		return Secret{}, fmt.Errorf("read secret: %w", err)
	}
	if cur == nil {
		return Secret{}, ErrNotFound
	}
	old, err := s.open(cur)
	if err != nil {
		return Secret{}, err
	}
	r := *cur
	now := s.now().UTC()
	r.UpdatedAt, r.UpdatedByID = &now, userOf(sc)
	if in.Header != nil {
		r.Header = Header{Name: in.Header.Name, Description: in.Header.Description}
		if in.Header.Slug != nil {
			r.Slug = *in.Header.Slug
		}
	}
	v := old
	if in.Secret != nil {
		same := in.Secret.Kind == cur.Kind && in.Secret.Data.Kind == cur.Data.Kind
		if same && in.Secret.Kind == KindCustomProvider {
			bound := cur.Data.Provider.URL
			if old.For != nil {
				bound = *old.For
			}
			same = in.Secret.Data.Provider.URL == bound
		}
		if !same {
			v = Sealed{}
		}
		if in.Secret.Key != nil {
			v.Key = *in.Secret.Key
		} else if !same && in.Secret.Kind == KindProviderKey {
			return Secret{}, errs.Field("Field required when the kind changes", nil, "body", "secret", "data", "provider", "key")
		}
		if in.Secret.Extras != nil {
			v.Extras = in.Secret.Extras
		}
		r.Kind, r.Data = in.Secret.Kind, in.Secret.Data
		if r.Kind == KindCustomProvider && r.Data.ProviderSlug == "" {
			r.Data.ProviderSlug = r.Slug
		}
	}
	if r.Kind == KindProviderKey {
		v.Extras, v.For = nil, nil
	} else {
		u := r.Data.Provider.URL
		v.For = &u
	}
	if r.Sealed, err = s.seal(r.ProjectID, r.ID, v); err != nil {
		return Secret{}, err
	}
	ok, err := s.store.UpdateSecret(ctx, r)
	if err != nil {
		return Secret{}, fmt.Errorf("update secret: %w", err)
	}
	if !ok { // deleted meanwhile
		return Secret{}, ErrNotFound
	}
	return r.Secret, nil
}

// Delete removes the project's secret id.
func (s *Service) Delete(ctx context.Context, sc scope.Scope, id uuid.UUID) error {
	ok, err := s.store.DeleteSecret(ctx, sc.ProjectID, id)
	if err != nil {
		return fmt.Errorf("delete secret: %w", err)
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// Reveal returns every secret of the project with its key and extra
// headers decrypted, oldest first: for the runtime's internal route only.
// A value that does not open fails the whole call (errs.Internal) rather
// than leaving a provider silently without its key. A custom provider's
// key and extras sealed for another URL than the one it shows are
// withheld: the runtime calls that URL without them.
func (s *Service) Reveal(ctx context.Context, sc scope.Scope) ([]Revealed, error) {
	rs, err := s.store.Secrets(ctx, sc.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	out := make([]Revealed, len(rs))
	for i := range rs {
		v, err := s.open(&rs[i])
		if err != nil {
			return nil, err
		}
		if rs[i].Kind == KindCustomProvider && !v.boundTo(rs[i].Data.Provider.URL) {
			v.Key, v.Extras = "", nil
		}
		out[i] = Revealed{Secret: rs[i].Secret, Sealed: v}
	}
	return out, nil
}
