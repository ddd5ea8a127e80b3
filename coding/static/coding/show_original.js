// The "codebook as written" switch (coding/_show_original.html): CSS shows the original
// texts while it is checked; this sends the choice as it changes, so the next item, page
// or device opens the same way. Without this file the switch still works on the page.
(function () {
  "use strict";
  const box = document.getElementById("show-original");
  if (!box || !box.form) return;
  box.addEventListener("change", () => {
    fetch(box.form.action, { method: "POST", body: new FormData(box.form), credentials: "same-origin" })
      .catch(() => {});  // not kept this time; the page still shows what was chosen
  });
})();
