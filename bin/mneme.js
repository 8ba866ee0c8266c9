#!/usr/bin/env node
import '../dist/src/surfaces/cli/main.js';
