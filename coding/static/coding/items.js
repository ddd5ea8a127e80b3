// The item browser: the box in the table's head chooses (or clears) every item on the
// page. Without this file each item is chosen by its own box.
(function () {
  "use strict";
  const all = document.getElementById("choose-all");
  if (!all) return;
  const boxes = Array.from(document.querySelectorAll("input[name=items]"));
  all.hidden = false;
  all.addEventListener("change", () => boxes.forEach((box) => { box.checked = all.checked; }));
  boxes.forEach((box) => box.addEventListener("change", () => {
    all.checked = boxes.every((b) => b.checked);
  }));
})();
