// The import form shows only the fields of the chosen format (each field's label says
// which formats use it in data-formats; none: every format), and the warning that the
// study has no codebook for what the chosen format reads, when it has none. Without this file every
// field shows and the server checks them all.
(function () {
  "use strict";
  const form = document.getElementById("import-form");
  if (!form) return;
  const format = form.querySelector("select[name=format]");
  function apply() {
    document.querySelectorAll("[data-formats]").forEach((label) => {
      const formats = label.dataset.formats.split(" ").filter(Boolean);
      label.hidden = formats.length > 0 && !formats.includes(format.value);
    });
  }
  format.addEventListener("change", apply);
  apply();
})();
