// examples/fail: a model that finds nothing to work on.
console.log(`job ${process.env.jobId} loading its input`);
console.error("error: the input data set is empty");
process.exit(1);
