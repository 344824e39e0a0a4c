// Which drawing a lesson's see-it-work plot gets, by its kind. Kept apart from the drawings themselves, which
// share fitplot.js's axes and stepper, so that no two static files import each other (their fingerprinted names
// are made from what they import).
import { renderFitPlot } from "./fitplot.js";

/** The see-it-work plot of any kind: the line fit at once, the others loaded when a lesson has one. */
export async function renderPlot(slot, plot) {
  const kind = plot.kind || "line-fit";
  if (kind === "nudge") return (await import("./nudgeplot.js")).renderNudgePlot(slot, plot);
  if (kind === "boundary") return (await import("./boundaryplot.js")).renderBoundaryPlot(slot, plot);
  if (kind === "contour") return (await import("./contourplot.js")).renderContourPlot(slot, plot);
  if (kind === "paths") return (await import("./pathsumplot.js")).renderPathSumPlot(slot, plot);
  if (kind === "sweeps") {
    const holder = (await import("./sweepplot.js")).renderSweepPlot(slot, plot);
    // A sweeps plot may carry its path-sum view, drawn beneath it (a section holds one plot).
    if (plot.paths) (await import("./pathsumplot.js")).renderPathSumPlot(slot, plot.paths);
    return holder;
  }
  return renderFitPlot(slot, plot);
}
