mod provider;
