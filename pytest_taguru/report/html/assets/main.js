// Draw the page from the island; the slices before the cases, whose filters read #f-slice.

renderRun();
renderGate();
renderCards();
renderCharts();
renderBaseline();
renderSlices();
initCases();
initDetail();
document.documentElement.dataset.ready = "true";
