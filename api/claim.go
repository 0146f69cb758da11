package api

import (
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// claimRequest is POST /v1/operations/{id}/claim and register's "claim".
type claimRequest struct {
	Worker       string `json:"worker" schema:"required,minlen=1,maxlen=200"`
	LeaseSeconds *int   `json:"lease_seconds" schema:"min=1,max=3600" doc:"default: the type's lease"`
	Begin        bool   `json:"begin" doc:"true: the claim also records 'about to call the provider' in the same change (action_pending, as begin would); call the provider next, then settle. Default false: send begin yourself"`
}

func (r claimRequest) toDomain(prefix string) (domain.Claim, fieldErrs) {
	var errs fieldErrs
	lease := leaseDuration(&errs, prefix+"lease_seconds", r.LeaseSeconds)
	return domain.Claim{Worker: r.Worker, Lease: lease, Begin: r.Begin}, errs
}

func parseClaim(data []byte) (domain.Claim, error) {
	var req claimRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Claim{}, err
	}
	cl, errs := req.toDomain("")
	return cl, errs.err()
}

// pullRequest is POST /v1/claims.
type pullRequest struct {
	Worker       string   `json:"worker" schema:"required,minlen=1,maxlen=200"`
	Types        []string `json:"types" doc:"empty or absent: every type"`
	Limit        *int     `json:"limit" schema:"min=1,max=100" doc:"default 1"`
	LeaseSeconds *int     `json:"lease_seconds" schema:"min=1,max=3600"`
	Begin        bool     `json:"begin" doc:"true: every claim also records 'about to call the provider' (action_pending); call the provider next, then settle"`
}

func parsePull(data []byte) (domain.PullClaim, error) {
	var req pullRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.PullClaim{}, err
	}
	cl, errs := claimRequest{Worker: req.Worker, LeaseSeconds: req.LeaseSeconds, Begin: req.Begin}.toDomain("")
	p := domain.PullClaim{Claim: cl, Types: req.Types, Limit: 1}
	if req.Limit != nil {
		p.Limit = *req.Limit // the domain checks 1..MaxPullLimit
	}
	if len(req.Types) > 100 {
		errs.add("types", "may list at most 100 types")
	}
	return p, errs.err()
}

// claimJSON is a claim response: the lease with its fencing token, the
// attempt and the approved snapshot to execute.
type claimJSON struct {
	Operation     *operationJSON  `json:"operation,omitempty" doc:"absent inside a registration response"`
	Lease         claimLeaseJSON  `json:"lease"`
	Attempt       attemptRefJSON  `json:"attempt"`
	Content       json.RawMessage `json:"content" schema:"object"`
	ContentSHA256 string          `json:"content_sha256"`
	ProviderKey   string          `json:"provider_key"`
	// ProviderKeyUse is why this attempt sends this provider key.
	ProviderKeyUse string `json:"provider_key_use" doc:"which provider key this attempt sends and why: the first send of a content version, a re-send under the key it was first sent with, or a new key for a revision"`
}

type claimLeaseJSON struct {
	Token     int64     `json:"token" doc:"the fencing token every later call must present"`
	Worker    string    `json:"worker"`
	ExpiresAt time.Time `json:"expires_at"`
}

type attemptRefJSON struct {
	ID     string `json:"id"`
	Number int    `json:"number"`
}

func toClaim(r domain.ClaimResult, withOperation bool) *claimJSON {
	c := &claimJSON{
		Lease:   claimLeaseJSON{Token: r.Lease.Token, Worker: r.Lease.Worker, ExpiresAt: r.Lease.ExpiresAt.UTC()},
		Attempt: attemptRefJSON{ID: r.Attempt.ID, Number: r.Attempt.Number},
		Content: r.Operation.Content, ContentSHA256: r.Operation.ContentSHA256, ProviderKey: r.Operation.ProviderKey,
		ProviderKeyUse: r.ProviderKeyUse,
	}
	if withOperation {
		c.Operation = toOperation(r.Operation, false)
	}
	return c
}

type claimList struct {
	Claims []*claimJSON `json:"claims" schema:"required"`
}

func (s *server) claim(c *gin.Context) {
	cl, ok := bind(s, c, parseClaim)
	if !ok {
		return
	}
	res, err := s.ledger.Workflow.Claim(c.Request.Context(), actorOf(c), c.Param("id"), cl)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, 200, toClaim(res, true))
}

func (s *server) claimNext(c *gin.Context) {
	p, ok := bind(s, c, parsePull)
	if !ok {
		return
	}
	res, err := s.ledger.Workflow.ClaimNext(c.Request.Context(), actorOf(c), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := claimList{Claims: []*claimJSON{}}
	for _, r := range res {
		out.Claims = append(out.Claims, toClaim(r, true))
	}
	s.render(c, 200, out)
}

// heartbeatRequest is POST /v1/operations/{id}/heartbeat.
type heartbeatRequest struct {
	LeaseToken   *int64 `json:"lease_token" schema:"required"`
	LeaseSeconds *int   `json:"lease_seconds" schema:"min=1,max=3600"`
}

func parseHeartbeat(data []byte) (domain.Heartbeat, error) {
	var req heartbeatRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Heartbeat{}, err
	}
	var errs fieldErrs
	token := leaseToken(&errs, req.LeaseToken)
	return domain.Heartbeat{LeaseToken: token, Lease: leaseDuration(&errs, "lease_seconds", req.LeaseSeconds)}, errs.err()
}

// leaseToken requires the fencing token: a missing one must not read as 0.
func leaseToken(errs *fieldErrs, t *int64) int64 {
	if t == nil {
		errs.add("lease_token", "is required")
		return 0
	}
	return *t
}
