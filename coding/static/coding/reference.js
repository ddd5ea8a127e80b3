// The reference-answer page: the coding form's keys and conditional questions, without
// drafts or quotes. Without this file the form still submits; the server checks it.
(function () {
  "use strict";
  const form = document.getElementById("reference-form");
  if (!form) return;
  const applyConditions = window.QuestionConditions(form);
  const keys = window.QuestionKeys(form, {
    onChange: (q, choice) => {
      if (q.dataset.kind === "number" && choice.checked) q.querySelector("input.number").value = "";
    },
  });
  form.addEventListener("change", applyConditions);
  form.addEventListener("input", (event) => {
    // A typed number replaces a "not reported"-style option of the same question.
    if (event.target.classList.contains("number")) {
      event.target.closest(".q").querySelectorAll("input[type=radio]").forEach((r) => { r.checked = false; });
    }
    applyConditions();
  });
  applyConditions();
  // After a refused save, start at the first question that needs attention.
  const shown = Array.from(form.querySelectorAll(".q")).filter((q) => !q.hidden);
  keys.focusQuestion(Math.max(0, shown.findIndex((q) => q.classList.contains("has-error"))));
})();
