import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './app.js';
import { SessionProvider } from './session/session-context.js';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SessionProvider>
      <BrowserRouter basename="/console">
        <App />
      </BrowserRouter>
    </SessionProvider>
  </StrictMode>,
);
