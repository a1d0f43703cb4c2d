// The console's icon: linked from its pages so browsers do not ask for /favicon.ico (a 404 on every load).

export const ICON_PATH = '/console/favicon.svg';

/** A telephone receiver on the console's accent colour; tiny, served from the gateway (CSP img-src 'self'). */
export const CONSOLE_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/>' +
  '<path fill="#fff" d="M11.6 7.5c.6-.2 1.3 0 1.6.6l1.8 3.6c.3.6.1 1.3-.4 1.7l-1.7 1.3c1 2.2 2.7 3.9 4.9 4.9l1.3-1.7c.4-.5 1.1-.7 1.7-.4l3.6 1.8c.6.3.8 1 .6 1.6l-.9 2.7c-.3.8-1 1.3-1.8 1.2C14.7 24.3 7.7 17.3 7.2 9.7c-.1-.8.4-1.5 1.2-1.8z"/></svg>';
