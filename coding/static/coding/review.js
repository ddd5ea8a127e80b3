// The review page: digits accept a coder's value, the last number picks "another
// value" and moves into its inputs; Enter records the decisions.
(function () {
  "use strict";
  const form = document.getElementById("review-form");
  if (!form) return;
  const keys = window.QuestionKeys(form, {
    choices: "input[name^='d-']",
    onChange: (q, choice) => {
      if (choice.value !== "other") return;
      const first = q.querySelector(".other-value input, .other-value textarea");
      if (first) first.focus();
    },
  });
  // Answering in the "another value" inputs selects that choice.
  form.querySelectorAll(".other-value").forEach((box) => {
    const pick = () => { box.closest(".q").querySelector(".other-choice").checked = true; };
    box.addEventListener("change", pick);
    box.addEventListener("input", pick);
  });
  keys.focusFirst();
})();
