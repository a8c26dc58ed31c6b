/** Limits of the upload routes, which take raw and multipart bodies rather than JSON. */

/** What the Worker accepts in one request body (the platform's cap is 100 MB), for forms and parts. */
export const MAX_REQUEST_BODY = 95 * 1024 * 1024;
