// The baseline of the upload bench: the least a Worker can do to store a request body in R2. No
// router, no authentication, no parsing, no hashing, no database: one `put` of the body stream
// (its Content-Length makes it a stream of known length, which R2 requires).

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (request.method !== "PUT" || !pathname.startsWith("/put/") || !request.body) return new Response("not found", { status: 404 });
    const object = await env.UPLOADS.put(`bench/${pathname.slice(5)}`, request.body);
    return Response.json({ key: object.key, size: object.size });
  },
};
