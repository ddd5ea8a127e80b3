// Keyboard handling shared by the coding and review pages: a question in focus,
// Tab between questions, digits (and Y/N) choose, Enter submits, ? shows the keys.
// A page passes extra keys as {key: handler}; choices are the inputs matching
// options.choices (by default those marked data-choice).
window.QuestionKeys = function (form, options) {
  "use strict";
  const settings = Object.assign(
    { extraKeys: {}, onChange: () => {}, advance: true, choices: "input[data-choice]" }, options || {});
  const questions = Array.from(form.querySelectorAll(".q"));
  const keys = document.getElementById("keys");
  let focusIndex = 0;

  const visible = () => questions.filter((q) => !q.hidden);
  const current = () => visible()[focusIndex];

  function focusQuestion(index) {
    const shown = visible();
    if (!shown.length) return;
    focusIndex = (index + shown.length) % shown.length;
    questions.forEach((q) => q.classList.remove("focus"));
    const q = shown[focusIndex];
    q.classList.add("focus");
    const target = q.querySelector(settings.choices + ":checked") || q.querySelector("input, textarea, select");
    if (target) target.focus({ preventScroll: true });
    q.scrollIntoView({ block: "nearest" });
  }

  // An option's key is its shortcut (data-shortcut, from the codebook), or else its
  // position 1-9 (coding.codebooks.spec keeps the two from clashing).
  function choiceFor(q, key) {
    const all = Array.from(q.querySelectorAll(settings.choices));
    const named = all.find((c) => c.dataset.shortcut === key.toLowerCase());
    if (named || !/^[1-9]$/.test(key)) return named;
    const placed = all[Number(key) - 1];
    return placed && !placed.dataset.shortcut ? placed : undefined;
  }

  function choose(key) {
    const q = current();
    if (!q) return false;
    const choice = choiceFor(q, String(key));
    if (!choice) return false;
    choice.checked = choice.type === "checkbox" ? !choice.checked : true;
    choice.dispatchEvent(new Event("change", { bubbles: true }));
    settings.onChange(q, choice);
    if (choice.type === "radio" && settings.advance && !("stay" in choice.dataset)) focusQuestion(focusIndex + 1);
    return true;
  }

  function isTyping(element) {
    return element.tagName === "TEXTAREA" || element.tagName === "SELECT" ||
      (element.tagName === "INPUT" && ["text", "number", "search"].includes(element.type));
  }

  function submit() {
    const button = form.querySelector("button[type=submit]");
    form.requestSubmit ? form.requestSubmit(button) : form.submit();
  }

  // The boxes a person types into within a question (a number, a text, another value and
  // its rationale on the review page): Tab goes through them before the next question.
  // Another value's boxes count once that choice is taken.
  function boxesOf(q) {
    const other = q.querySelector(".other-choice");
    return Array.from(q.querySelectorAll("input, textarea, select"))
      .filter((box) => isTyping(box) && !box.disabled && box.offsetParent !== null &&
        !(other && !other.checked && box.closest(".other-value")));
  }

  // From a choice, forward goes to the question's first box (the review page's rationale),
  // else to the next question; from a box, to the next box, else the next question.
  function tab(target, back) {
    const q = target.closest(".q");
    const boxes = q ? boxesOf(q) : [];
    const at = boxes.indexOf(target);
    const next = at === -1 ? (back ? undefined : boxes[0]) : boxes[at + (back ? -1 : 1)];
    if (next) {
      next.focus();
      return;
    }
    focusQuestion(focusIndex + (back ? -1 : 1));
  }

  // The special answers a number box's Alt+digit and letters reach: the question's own
  // choices, or on the review page those beside the "another value" box.
  function boxChoice(box, key) {
    const other = box.closest(".other-value");
    if (!other) return choiceFor(box.closest(".q"), key);
    const all = Array.from(other.querySelectorAll("input[data-choice]"));
    return all.find((c) => c.dataset.shortcut === key.toLowerCase()) ||
      (/^[1-9]$/.test(key) && !all[Number(key) - 1]?.dataset.shortcut ? all[Number(key) - 1] : undefined);
  }

  function chooseInBox(box, key) {
    const choice = boxChoice(box, key);
    if (!choice) return false;
    box.value = "";
    if (box.closest(".other-value")) {
      choice.checked = true;
      choice.dispatchEvent(new Event("change", { bubbles: true }));
      return true;
    }
    return choose(key);
  }

  document.addEventListener("keydown", (event) => {
    if (keys && keys.open) return;
    const target = event.target;
    if (event.key === "Tab" && form.contains(target)) {
      event.preventDefault();
      tab(target, event.shiftKey);
      return;
    }
    if (isTyping(target)) {
      if (event.key === "Escape") target.blur();
      // In a number box a letter is no number: it may be a special answer's own key;
      // Alt+digit reaches a special answer by its number (a plain digit types).
      const box = target.classList.contains("number") && target.closest(".q") && target;
      if (box && event.altKey && /^Digit[1-9]$/.test(event.code) && boxChoice(box, event.code.slice(5))) {
        event.preventDefault();
        chooseInBox(box, event.code.slice(5));
        return;
      }
      if (box && /^[a-z]$/i.test(event.key) && !event.ctrlKey && !event.metaKey && !event.altKey &&
          boxChoice(box, event.key)) {
        event.preventDefault();
        chooseInBox(box, event.key);
        return;
      }
      if (event.key === "Enter" && target.tagName === "INPUT" && form.contains(target)) {
        event.preventDefault();
        submit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    const q = current();
    if (/^[1-9]$/.test(key)) { event.preventDefault(); choose(key); }
    else if (/^[a-z0-9]$/i.test(key) && q && choiceFor(q, key)) { event.preventDefault(); choose(key); }
    else if ((key === "y" || key === "n") && q && q.dataset.kind === "yes_no") {
      event.preventDefault(); choose(key === "y" ? 1 : 2);
    }
    else if (key === "Enter") { event.preventDefault(); submit(); }
    else if (key === "?" && keys) { event.preventDefault(); keys.showModal(); }
    else if (settings.extraKeys[key.toLowerCase()]) {
      event.preventDefault();
      settings.extraKeys[key.toLowerCase()](q);
    }
  });

  questions.forEach((q) => q.addEventListener("focusin", (event) => {
    focusIndex = Math.max(0, visible().indexOf(q));
    questions.forEach((other) => other.classList.toggle("focus", other === q));
    // A number box holding a draft's value: the first key typed replaces it, never
    // appends to it ("12" then "1" is 1, not 121).
    if (event.target.classList.contains("number")) event.target.select();
  }));

  // An error shown after a refused submit goes as soon as its question is answered: its
  // message, its mark and its line in the summary at the top.
  function clearError(event) {
    const q = event.target.closest(".q");
    if (!q || !q.classList.contains("has-error")) return;
    q.classList.remove("has-error");
    q.querySelectorAll(".error").forEach((message) => { message.hidden = true; });
    const summary = document.getElementById("error-summary");
    if (!summary) return;
    summary.querySelectorAll('a[href="#' + q.id + '"]').forEach((link) => { link.closest("li").hidden = true; });
    if (!summary.querySelector("li:not([hidden])")) summary.hidden = true;
  }
  form.addEventListener("input", clearError);
  form.addEventListener("change", clearError);
  const keysButton = document.getElementById("keys-button");
  if (keysButton && keys) keysButton.addEventListener("click", () => keys.showModal());

  // After a refused submit: the first question with a problem, else the first.
  function focusFirst() {
    const shown = visible();
    const wrong = shown.findIndex((q) => q.classList.contains("has-error"));
    focusQuestion(Math.max(wrong, 0));
  }

  return { focusQuestion, focusFirst, current, isTyping, submit };
};

// Conditional questions: a question with data-show-if ({"question": key, "in": [values]})
// is shown only while that question is shown and answered with one of the values. The
// returned function applies the conditions; call it after every change.
window.QuestionConditions = function (form) {
  "use strict";
  const questions = Array.from(form.querySelectorAll(".q"));

  function answersOf(key) {
    return Array.from(form.querySelectorAll('[name="q-' + key + '"]'))
      .filter((input) => (input.type === "radio" || input.type === "checkbox") ? input.checked : input.value.trim())
      .map((input) => input.value.trim());
  }

  return function applyConditions() {
    questions.forEach((q) => {
      if (!q.dataset.showIf) return;
      const condition = JSON.parse(q.dataset.showIf);
      const parent = form.querySelector('.q[data-key="' + condition.question + '"]');
      const shown = parent && !parent.hidden && answersOf(condition.question).some((a) => condition.in.includes(a));
      q.hidden = !shown;
    });
    // Numbers count the questions shown (1, 2, 3 whatever is hidden between them).
    let number = 0;
    questions.forEach((q) => {
      const label = q.querySelector(".qnum");
      if (label) label.textContent = q.hidden ? "" : String(++number);
    });
  };
};

// Code blocks in the item scroll sideways inside it; a keyboard reaches them too.
document.querySelectorAll("#item pre").forEach((block) => { block.tabIndex = 0; });
