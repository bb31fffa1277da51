// balgen's results page: draws the plotly figures the page carries, and makes its tables sortable and filterable.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("balgen-data").textContent);
  const config = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

  function draw(target, figure) {
    Plotly.react(target, figure.data, figure.layout, config);
  }

  document.querySelectorAll("[data-chart]").forEach(function (target) {
    draw(target, data.charts[target.dataset.chart]);
  });

  // A picker shows one item's chart or picture; a click on a table row with that item shows it.
  const pickers = [];
  document.querySelectorAll("[data-picker]").forEach(function (box) {
    const entry = data.pickers[box.dataset.picker];
    const select = box.querySelector("select");
    const target = box.querySelector(".picker-target");
    function show(item) {
      if (entry.figures[item]) {
        draw(target, entry.figures[item]);
      } else if (entry.images[item]) {
        target.querySelector("img").src = entry.images[item];
      } else {
        return false;
      }
      select.value = item;
      return true;
    }
    select.addEventListener("change", function () { show(select.value); });
    show(select.value);
    pickers.push({ box: box, show: show });
  });

  function sortValue(cell, numeric) {
    const key = cell.dataset.sort;
    if (numeric) {
      return key === undefined || key === "" ? null : parseFloat(key);
    }
    return (key === undefined ? cell.textContent : key).toLowerCase();
  }

  document.querySelectorAll(".table-block").forEach(function (block) {
    const table = block.querySelector("table");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    const headers = Array.from(table.tHead.rows[0].cells);
    const search = block.querySelector("input.search");
    const filters = Array.from(block.querySelectorAll("select.filter"));
    const count = block.querySelector(".count");

    headers.forEach(function (header, column) {
      header.addEventListener("click", function () {
        const ascending = header.getAttribute("aria-sort") !== "ascending";
        const numeric = header.classList.contains("num");
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const keyed = rows.map(function (row, index) { return [sortValue(row.cells[column], numeric), index, row]; });
        keyed.sort(function (a, b) {
          if (a[0] === null || b[0] === null) {  // a missing figure sorts last either way
            return a[0] === b[0] ? a[1] - b[1] : a[0] === null ? 1 : -1;
          }
          const order = a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1];
          return ascending ? order : -order;
        });
        keyed.forEach(function (item) { body.appendChild(item[2]); });
      });
    });

    function applyFilters() {
      const words = search ? search.value.trim().toLowerCase() : "";
      let shown = 0;
      rows.forEach(function (row) {
        const keep = (!words || row.textContent.toLowerCase().includes(words)) &&
          filters.every(function (filter) {
            return !filter.value || row.cells[Number(filter.dataset.column)].textContent === filter.value;
          });
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      count.textContent = (shown === rows.length ? "" : shown + " of ") + rows.length + " " + count.dataset.what;
    }
    if (search) { search.addEventListener("input", applyFilters); }
    filters.forEach(function (filter) { filter.addEventListener("change", applyFilters); });

    rows.forEach(function (row) {
      if (!row.dataset.test) { return; }
      row.addEventListener("click", function () {
        const shownIn = pickers.filter(function (picker) { return picker.show(row.dataset.test); });
        if (!shownIn.length) { return; }
        document.querySelectorAll("tr.chosen").forEach(function (other) { other.classList.remove("chosen"); });
        row.classList.add("chosen");
        shownIn[0].box.scrollIntoView({ behavior: "smooth", block: "nearest" });
      });
    });
  });
})();
