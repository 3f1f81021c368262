// Draw the page from the island. Slices (DATA.slices, built by report/html/island.py
// slices_section) are drawn into #slices, with the slice filter #f-slice, once taguru_slices
// defines them; until then the key is null and both stay hidden.

renderRun();
renderGate();
renderCards();
renderCharts();
renderBaseline();
initCases();
initDetail();
document.documentElement.dataset.ready = "true";
