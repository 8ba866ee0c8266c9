// Browsing is an engine operation (engine.browse: filters, freshness, order); the HTTP API and
// the dashboard only render it. The filter values are re-exported for their forms and docs.
export { FRESHNESS_FILTERS, STATUS_FILTERS } from '../../engine/engine.js';
export type { BrowseFilters, MemoryRow } from '../../engine/engine.js';
