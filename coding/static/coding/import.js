// The import form shows only the fields of the chosen format (each field's label says
// which formats use it in data-formats; none: every format). Without this file every
// field shows and the server checks them all.
(function () {
  "use strict";
  const form = document.getElementById("import-form");
  if (!form) return;
  const format = form.querySelector("select[name=format]");
  function apply() {
    form.querySelectorAll("label[data-formats]").forEach((label) => {
      const formats = label.dataset.formats.split(" ").filter(Boolean);
      label.hidden = formats.length > 0 && !formats.includes(format.value);
    });
  }
  format.addEventListener("change", apply);
  apply();
})();
