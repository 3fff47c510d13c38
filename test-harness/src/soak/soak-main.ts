// Entry point of `npm run soak` (work in progress).
console.log('soak: not yet implemented');
