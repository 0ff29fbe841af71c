package admission_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FuzzServeHTTP feeds arbitrary bodies to the webhook: it must never panic,
// and answer either an allowed AdmissionReview for the request's UID or a
// 4xx, never an empty 200.
func FuzzServeHTTP(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"UPDATE",` +
		`"kind":{"version":"v1","kind":"ConfigMap"},"object":{"metadata":{"name":"a"},"data":{"x":"1"}},"oldObject":{"metadata":{"name":"a"}}}}`))
	f.Add([]byte(`{"request":{"uid":"u","operation":"UPDATE","subResource":"status","object":{"status":1},"oldObject":{"status":[1]}}}`))
	f.Add([]byte(`{"request":{"uid":"u","operation":"CREATE","kind":{"version":"v1","kind":"K"},"object":null}}`))
	f.Add([]byte(`{"request":{"uid":5}}`))
	f.Add([]byte(`nul`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fx := newFixture(t, 1<<16)
		rec := fx.post(t, "/validate/m", body)
		if rec.Code >= 400 && rec.Code < 500 {
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
		var got struct {
			Response *struct {
				UID     string `json:"uid"`
				Allowed bool   `json:"allowed"`
			} `json:"response"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil {
			t.Fatalf("200 without an AdmissionReview: %q", rec.Body.String())
		}
		var sent struct {
			Request struct {
				UID string `json:"uid"`
			} `json:"request"`
		}
		_ = json.Unmarshal(body, &sent)
		if !got.Response.Allowed || got.Response.UID == "" || got.Response.UID != sent.Request.UID {
			t.Fatalf("response %+v for request uid %q", *got.Response, sent.Request.UID)
		}
	})
}
