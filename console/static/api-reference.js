// API reference page: Swagger UI (swagger-ui-dist, served by Atelier from node_modules) rendering
// the service's own OpenAPI document. The validator badge is off: it would send the document to
// an outside service.
"use strict";

const mount = document.getElementById("api-reference");
if (mount && window.SwaggerUIBundle) {
  window.SwaggerUIBundle({
    url: mount.dataset.specUrl,
    domNode: mount,
    // Deep links put an anchor inside each operation's toggle button (nested controls, which
    // screen readers cannot operate); without them the path is plain text.
    deepLinking: false,
    validatorUrl: null,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    onComplete: nameUnlabelledControls,
  });
  // Operations render their selects (media types, servers) when opened: name those too.
  new MutationObserver(nameUnlabelledControls).observe(mount, { childList: true, subtree: true });
}

/** Swagger UI's selects carry a visible caption but no (or an empty) label; give each an accessible name. */
function nameUnlabelledControls() {
  for (const select of mount.querySelectorAll("select:not([aria-label]):not([aria-labelledby])")) {
    const caption =
      select.id === "servers"
        ? "Server"
        : select.closest(".response-control-media-type")
          ? "Response media type"
          : select.closest(".opblock-section-request-body")
            ? "Request media type"
            : select.getAttribute("name") || "Option";
    select.setAttribute("aria-label", caption);
  }
}
