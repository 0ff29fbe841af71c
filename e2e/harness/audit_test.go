package harness

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every 403 counts — the authorizer's, and the create check of a
// server-side apply that the authorizer allowed as a patch — except
// the refusals of writes into a namespace or CRD being deleted.
func TestRefusedInCountsEvery403ButRemovalRaces(t *testing.T) {
	log := `{"stage":"ResponseStarted","verb":"watch","requestURI":"/api/v1/secrets?watch=1","user":{"username":"sa"},"responseStatus":{"code":200}}
{"stage":"ResponseComplete","verb":"list","requestURI":"/api/v1/pods?limit=500","user":{"username":"sa"},"responseStatus":{"code":403,"message":"pods is forbidden"}}
{"stage":"ResponseComplete","verb":"list","requestURI":"/api/v1/pods?limit=1","user":{"username":"sa"},"responseStatus":{"code":403,"message":"pods is forbidden again"}}
{"stage":"ResponseComplete","verb":"patch","requestURI":"/apis/apps/v1/namespaces/a/deployments/d","user":{"username":"sa"},"responseStatus":{"code":403,"message":"cannot create resource"}}
{"stage":"ResponseComplete","verb":"patch","requestURI":"/api/v1/namespaces/b/configmaps/c","user":{"username":"sa"},"responseStatus":{"code":403,"message":"unable to create new content in namespace b because it is being terminated"}}
{"stage":"ResponseComplete","verb":"create","requestURI":"/apis/sample.kyma-project.io/v1alpha1/namespaces/kyma-system/samples","user":{"username":"sa"},"responseStatus":{"code":403,"message":"samples.sample.kyma-project.io \"default\" is forbidden: create not allowed while custom resource definition is terminating"}}
{"stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/namespaces/b/configmaps/c","user":{"username":"sa"},"responseStatus":{"code":404}}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, []byte(log), 0o600))
	refused, err := refusedIn(path)
	require.NoError(t, err)
	require.Len(t, refused, 2)
	assert.Equal(t, &refusal{count: 2, message: "pods is forbidden"}, refused["sa list /api/v1/pods"])
	assert.Equal(t, 1, refused["sa patch /apis/apps/v1/namespaces/a/deployments/d"].count)
}
