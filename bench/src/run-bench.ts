// Entry point of npm run bench; see bench/README.md (work in progress).
console.log('bench: not yet implemented');
