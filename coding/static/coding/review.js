// The review page: digits accept a coder's value, the last number picks "another
// value" and moves into its inputs; Enter records the decisions. Each coder's quotes are
// marked in the item's text in that coder's style, and a listed quote scrolls to its mark.
(function () {
  "use strict";
  markQuotes();
  const form = document.getElementById("review-form");
  if (!form) return;
  const keys = window.QuestionKeys(form, {
    choices: "input[name^='d-']",
  });
  // Answering in the "another value" inputs selects that choice; choosing it however it
  // is chosen (its number, a click, the arrow keys) moves into its first box.
  form.querySelectorAll(".other-value").forEach((box) => {
    const pick = () => { box.closest(".q").querySelector(".other-choice").checked = true; };
    box.addEventListener("change", pick);
    box.addEventListener("input", pick);
  });
  form.querySelectorAll(".other-choice").forEach((choice) => choice.addEventListener("change", () => {
    const other = choice.closest(".q").querySelector(".other-value");
    const first = other && (other.querySelector("input.number, textarea, input:checked") ||
      other.querySelector("input"));
    if (choice.checked && first) first.focus();
  }));
  keys.focusFirst();

  // Colour is not the only sign of whose quote it is: each coder's marks have their own
  // underline style and end in the coder's number (the legend's), and the title names
  // the coder and the question.
  function markQuotes() {
    document.querySelectorAll("button[data-quote]").forEach((link) => {
      const field = document.querySelector('#item [data-field="' + CSS.escape(link.dataset.field) + '"]');
      const marks = field ? window.QuoteMarks.mark(field, link.dataset.quote, Number(link.dataset.start) || 0, () => {
        const mark = document.createElement("mark");
        mark.className = "quote by-" + link.dataset.by;
        mark.title = link.dataset.who;
        return mark;
      }) : [];
      if (!marks.length) {
        link.disabled = true;
        link.parentElement.querySelector(".quote-missing").hidden = false;
        return;
      }
      const badge = document.createElement("sup");
      badge.className = "quote-by by-" + link.dataset.by;
      badge.setAttribute("aria-hidden", "true");
      badge.textContent = link.dataset.number;
      marks[marks.length - 1].after(badge);
      link.addEventListener("click", () => {
        marks[0].scrollIntoView({ block: "center" });
        marks.forEach((mark) => mark.classList.add("flash-target"));
        setTimeout(() => marks.forEach((mark) => mark.classList.remove("flash-target")), 1500);
      });
    });
  }
})();
