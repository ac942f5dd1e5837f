export type { SharedState } from './state.js';
