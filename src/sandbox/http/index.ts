/** The HTTP face: the app and its middleware, the routes, the OpenAPI document, the stream, the web inspector. */
export { NO_ANSWER } from './api-faults.js';
export { type AppOptions, createApp } from './app.js';
