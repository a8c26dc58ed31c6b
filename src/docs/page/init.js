// The reference page's script (/docs, src/docs/routes.ts), copied to /docs/assets/init.js by
// scripts/copy-assets.mjs; a file rather than inline, so a strict Content-Security-Policy can forbid
// inline scripts. Swagger UI draws /docs/reference.json, the OpenAPI 3.0 form of /openapi.json with
// parameter examples shown rather than filled in (src/docs/document.ts); the page's <link rel=preload>
// has been fetching it while Swagger UI loaded.
(function () {
  var loading = document.getElementById("reference-loading");
  fetch("/docs/reference.json")
    .then(function (response) {
      if (!response.ok) throw new Error("GET /docs/reference.json answered " + response.status);
      return response.json();
    })
    .then(function (spec) {
      window.ui = window.SwaggerUIBundle({
        spec: spec,
        dom_id: "#reference",
        deepLinking: true,
        // 34 tags and over 250 operations: a box that keeps the tags whose name holds what is typed.
        filter: true,
        persistAuthorization: true,
        onComplete: function () {
          if (loading) loading.hidden = true;
        },
      });
    })
    .catch(function (error) {
      if (loading) loading.textContent = "The reference could not be drawn: " + error.message;
    });
})();
